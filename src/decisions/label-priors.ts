// Contextual calibration of label scores (Zhao et al., 2021, "Calibrate before use"). A small model
// prefers some label names whatever the text says; scoring the same labels after a text that says
// nothing measures that preference, and dividing it out leaves what the text itself supports.
// A label set's prior costs one short job the first time it is seen and is then cached. The job is
// the one classify scores a text with (label-jobs.ts), the content-free text in place of the text.
import type { Session } from '../engine/engine.js';
import type { LabelJobs, LabelOrders } from './label-jobs.js';
import type { Label } from './labels.js';

export const CONTENT_FREE_TEXT = 'N/A';
const CACHED_LABEL_SETS = 1024;

export class LabelPriors {
  private readonly cache = new Map<string, Promise<number[]>>();

  /** The priors of the labels listed in `orders` (label-jobs.ts), read with `jobs`. */
  constructor(
    private readonly jobs: LabelJobs,
    private readonly orders: LabelOrders,
  ) {}

  /**
   * Log-probabilities of each label after the content-free text (and the question, if any), in
   * label order; read in the `session` of the request that asks first, charged to its budget.
   */
  of(session: Session, labels: Label[], question?: string): Promise<number[]> {
    const key = JSON.stringify([labels, question ?? null]);
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key); // most recently used last
      this.cache.set(key, cached);
      return cached;
    }
    // Not cancelled with the request that asked first: other requests may be waiting for it.
    const prior = session
      .withoutSignal()
      .score([this.jobs.job(CONTENT_FREE_TEXT, labels, question, this.orders)])
      .then(([r]) => Array.from(r!.logprobs));
    prior.catch(() => this.cache.delete(key)); // a failed prior (529, 502) is computed again next time
    this.cache.set(key, prior);
    if (this.cache.size > CACHED_LABEL_SETS) this.cache.delete(this.cache.keys().next().value!);
    return prior;
  }
}

/** Label log-probabilities with the prior divided out. */
export function calibrated(logprobs: ArrayLike<number>, prior: number[]): number[] {
  return Array.from(logprobs, (x, i) => x - prior[i]!);
}
