// The jobs that read a label set after a text (classify's, and its label set's prior in
// label-priors.ts): the text's shared reading (reading.ts) as the prefix, one branch per order the
// labels are listed in, and the labels' names as the options. Classify lists the labels in the
// set's own orders: ORDERS orders that depend only on the label set, sorted by a hash of their
// names, then that list shifted by a third and by two thirds, so every label is read near the top,
// the middle and the end, and the request's order cannot move a decision.
import type { ScoreJob } from '../binding.js';
import { fnv1a } from './hash.js';
import { labelList, type Label } from './labels.js';
import type { Reading } from './reading.js';

const ORDERS = 3;

/** How a job lists the labels: in the order asked (once), or in the set's own orders. */
export type LabelOrders = 'asked' | 'own';

export class LabelJobs {
  constructor(private readonly reading: Reading) {}

  /** The branch that lists `labels` after the reading's prefix. */
  branch(labels: Label[], question?: string): Int32Array {
    return this.reading.branch(`Labels:\n${labelList(labels)}\n\nThe best label:`, question);
  }

  /** The branches that list `labels` in `orders` after the reading's prefix, one per listing. */
  branches(labels: Label[], question?: string, orders: LabelOrders = 'asked'): Int32Array[] {
    const listings = orders === 'asked' ? [labels] : ownOrders(labels);
    return listings.map((l) => this.branch(l, question));
  }

  /** The options every listing of `labels` scores: their names, in the request's order. */
  options(labels: Label[]): Int32Array[] {
    return this.reading.prompt.choices(labels.map((l) => l.name));
  }

  /** The job that scores every label for one text: one branch per order the labels are listed in. */
  job(text: string, labels: Label[], question?: string, orders: LabelOrders = 'asked'): ScoreJob {
    return {
      prefix: this.reading.prefix(text),
      branches: this.branches(labels, question, orders),
      options: this.options(labels),
    };
  }
}

/** The labels in the set's own orders: by FNV-1a hash of the name, then rotated by a third and two thirds. */
function ownOrders(labels: Label[]): Label[][] {
  const own = [...labels].sort((a, b) => fnv1a(a.name) - fnv1a(b.name) || (a.name < b.name ? -1 : 1));
  return Array.from({ length: ORDERS }, (_, k) => {
    const by = Math.round((k * own.length) / ORDERS);
    return [...own.slice(by), ...own.slice(0, by)];
  });
}
