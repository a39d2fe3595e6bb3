// Redis, when configured, holds what replicas must share at request speed: the rate-limit
// counters (one atomic script per request, windows on Redis's own clock so replica clocks do
// not matter) and the revocation fan-out (pub/sub: a revoked key leaves every replica's verdict
// cache at once instead of after its time-to-live).
import { Redis } from 'ioredis';
import { MemoryLimiter, WINDOW_MS, type LimitVerdict, type Limiter } from '../auth/limiter.js';

const REVOKED_CHANNEL = 'decision-machine-1:revoked';

// KEYS: none (the key name depends on Redis's clock). ARGV: key id, cost, limit, window ms.
// Returns { allowed 0/1, count after, ms left in the window }.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = math.floor(now / tonumber(ARGV[4]))
local key = 'dm:rl:' .. ARGV[1] .. ':' .. window
local cost, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local n = redis.call('INCRBY', key, cost)
if n == cost then redis.call('PEXPIRE', key, tonumber(ARGV[4]) * 2) end
local left = (window + 1) * tonumber(ARGV[4]) - now
if n > limit then
  redis.call('DECRBY', key, cost)
  return {0, n - cost, left}
end
return {1, n, left}
`;

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

/**
 * Counters shared by every replica. While Redis cannot be reached, each replica counts on its own
 * (the limit then holds per replica, not in total) and says so in the log once per outage.
 */
export class RedisLimiter implements Limiter {
  private readonly fallback: MemoryLimiter;
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly limit: number,
    private readonly onOutage: (err: Error) => void = () => {},
  ) {
    this.fallback = new MemoryLimiter(limit);
  }

  async take(keyId: string, cost: number): Promise<LimitVerdict> {
    let reply: [number, number, number];
    try {
      reply = (await this.redis.eval(TAKE, 0, keyId, cost, this.limit, WINDOW_MS)) as [number, number, number];
    } catch (err) {
      if (!this.degraded) this.onOutage(err as Error);
      this.degraded = true;
      return this.fallback.take(keyId, cost);
    }
    this.degraded = false;
    const [allowed, count, left] = reply;
    return {
      allowed: allowed === 1,
      limit: this.limit,
      remaining: this.limit - count,
      resetSeconds: Math.max(1, Math.ceil(left / 1000)),
    };
  }
}

/** Tells every replica that a key was revoked. */
export async function publishRevocation(redis: Redis, keyId: string): Promise<void> {
  await redis.publish(REVOKED_CHANNEL, keyId);
}

/** Calls `onRevoked` with each revoked key id; resolves once subscribed. Returns the subscriber connection. */
export async function subscribeRevocations(
  url: string,
  onRevoked: (keyId: string) => void,
  onError?: (err: Error) => void,
): Promise<Redis> {
  const sub = await connectRedis(url, { onError });
  sub.on('message', (_channel: string, keyId: string) => onRevoked(keyId));
  await sub.subscribe(REVOKED_CHANNEL);
  return sub;
}
