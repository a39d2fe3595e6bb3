// Redis, when configured, holds what replicas must share at request speed: the rate-limit
// counters (auth/limiter.ts's RedisLimiter runs its script on a connection made here) and the
// revocation fan-out (pub/sub: a revoked key leaves every replica's verdict cache at once instead
// of after its time-to-live).
import { Redis } from 'ioredis';

const REVOKED_CHANNEL = 'decision-machine-1:revoked';

/**
 * A connection that reconnects by itself. With `failFast`, commands fail at once while Redis is
 * away instead of waiting for it (the request path must not stall); resolves once connected or
 * after `waitMs`, whichever comes first.
 */
export async function connectRedis(
  url: string,
  options: { failFast?: boolean; waitMs?: number; onError?: (err: Error) => void } = {},
): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: !options.failFast });
  redis.on('error', options.onError ?? (() => {}));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, options.waitMs ?? 5000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}

/** Tells every replica that a key was revoked. */
export async function publishRevocation(redis: Redis, keyId: string): Promise<void> {
  await redis.publish(REVOKED_CHANNEL, keyId);
}

/**
 * Calls `onRevoked` with each revoked key id; resolves once subscribed, or at once when Redis is
 * away (the subscription is made when it answers, so a start-up does not wait for it). Returns
 * the subscriber connection.
 */
export async function subscribeRevocations(
  url: string,
  onRevoked: (keyId: string) => void,
  onError?: (err: Error) => void,
): Promise<Redis> {
  const sub = await connectRedis(url, { onError });
  sub.on('message', (_channel: string, keyId: string) => onRevoked(keyId));
  const subscribed = sub.subscribe(REVOKED_CHANNEL).catch((err: Error) => onError?.(err));
  if (sub.status === 'ready') await subscribed;
  return sub;
}
