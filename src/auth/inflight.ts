// Fair admission: at most `max` requests of one key in flight at once, in this process, so one
// key cannot take every slot and queue place (DM_KEY_MAX_INFLIGHT, with key checking on). A
// request over the cap gets 429 rate_limit_exceeded with Retry-After, sent `delayMs` after the
// refusal, as a 529 is, so a client retrying at once cannot spin the CPU the slots need.
import { ERRORS } from '../errors.js';

export class InflightCap {
  private readonly counts = new Map<string, number>();

  constructor(
    readonly max: number,
    private readonly delayMs = 0,
  ) {}

  /** Requests of `keyId` in flight now. */
  of(keyId: string): number {
    return this.counts.get(keyId) ?? 0;
  }

  /** Admits one request of `keyId` and returns its release (idempotent), or refuses with 429. */
  async take(keyId: string): Promise<() => void> {
    if (this.of(keyId) >= this.max) {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      throw ERRORS.inflightCap(this.max);
    }
    this.counts.set(keyId, this.of(keyId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.of(keyId) - 1;
      if (left > 0) this.counts.set(keyId, left);
      else this.counts.delete(keyId);
    };
  }
}
