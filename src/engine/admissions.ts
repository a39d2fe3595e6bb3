// The requests admitted and not yet answered, against the engine's capacity (slots + queue). A
// request is counted in by Engine.admit and out when its session closes (session.ts), so the
// count lives below both; close() refuses new requests and waits for the count to reach zero.
import { ERRORS } from '../errors.js';

export class Admissions {
  private inflight = 0;
  private refusals = 0;
  private closed = false;
  private drained: (() => void) | undefined;

  constructor(readonly capacity: number) {}

  /** Admitted requests not yet answered. */
  get count(): number {
    return this.inflight;
  }

  /** Requests refused with 529 since start. */
  get refused(): number {
    return this.refusals;
  }

  /** Throws `overloaded` when a new request would not be admitted now (`shutting_down` after close()). */
  check(): void {
    if (this.closed) throw ERRORS.shuttingDown();
    if (this.inflight >= this.capacity) {
      this.refusals++;
      throw ERRORS.overloaded();
    }
  }

  /** Counts one request in, or throws as check() does. */
  take(): void {
    this.check();
    this.inflight++;
  }

  /** Counts an answered request out; the last one out lets close() return. */
  release(): void {
    if (--this.inflight === 0) this.drained?.();
  }

  /** Refuses new requests and resolves once every admitted one is answered. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }
}
