// Requests per minute per key, in fixed windows aligned to the minute: a request costing n items
// is admitted only if the window's count stays <= the limit, so no window ever exceeds it. The
// counters live in this process (MemoryLimiter) or, shared by replicas, in Redis (RedisLimiter:
// one atomic script per request, windows on Redis's own clock so replica clocks do not matter).
import type { Redis } from 'ioredis';

export interface LimitVerdict {
  allowed: boolean;
  limit: number;
  /** Items still allowed in this window. */
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
}

export interface Limiter {
  take(keyId: string, cost: number): Promise<LimitVerdict>;
}

export const WINDOW_MS = 60_000;

/** One process's counters: exact for a single replica (the SQLite set-up). */
export class MemoryLimiter implements Limiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  async take(keyId: string, cost: number): Promise<LimitVerdict> {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    const used = this.counts.get(keyId) ?? 0;
    const allowed = used + cost <= this.limit;
    if (allowed) this.counts.set(keyId, used + cost);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    return { allowed, limit: this.limit, remaining: this.limit - (allowed ? used + cost : used), resetSeconds };
  }
}

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

/**
 * Input tokens per minute per key, counted after each answer (the count is known only then), in
 * this process: a request is admitted while its key's window is under the limit, so the last
 * one admitted may pass it. The hosted service's SDK reads the window from x-ratelimit-*-tokens.
 */
export class TokenMeter {
  private window = -1;
  private used = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key's window: tokens left (0 when spent) and seconds until it resets. */
  state(keyId: string): { limit: number; remaining: number; resetSeconds: number } {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.used.clear();
    }
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    return { limit: this.limit, remaining: Math.max(0, this.limit - (this.used.get(keyId) ?? 0)), resetSeconds };
  }

  spend(keyId: string, tokens: number): void {
    this.state(keyId); // rolls the window over first
    this.used.set(keyId, (this.used.get(keyId) ?? 0) + tokens);
  }
}
