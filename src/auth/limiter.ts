// Requests per minute per key, in fixed windows aligned to the minute: a request costing n items
// is admitted only if the window's count stays <= the limit, so no window ever exceeds it.
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
