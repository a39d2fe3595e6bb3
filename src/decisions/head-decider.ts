// What a decision asks of the heads a deployment fitted on its own labels (src/heads implements
// it): given the decision's definition and its texts, the probabilities of its outcomes by the head
// fitted for that definition, or undefined when there is none (the decision reads zero-shot).
import type { Session } from '../engine/engine.js';
import type { Label } from './labels.js';
import type { Tree } from './tree-paths.js';

/** What defines a decision, whatever text it is asked of. */
export type Definition =
  | { capability: 'yes-no'; statement: string; when_true?: string; when_false?: string }
  | { capability: 'classify'; labels: Label[] }
  | { capability: 'classify-tree'; tree: Tree }
  | { capability: 'rate'; scale: string[] }
  // verify's value is asked of each text (`values` of decide), not part of the decision.
  | { capability: 'verify'; field: { name: string; description?: string } };

/**
 * Each text's probabilities over the definition's outcomes (yes-no and verify: [false, true];
 * classify: the labels in `outcomes` order; classify-tree: its leaf paths, each as the JSON of its
 * array of labels; rate: the levels), by the head named `head`.
 */
export interface HeadDecision {
  head: string;
  outcomes: string[];
  probabilities: number[][];
  promptTokens: number;
  /** The reading's model time (ScoreResult.decodeMs). */
  decodeMs: number;
}

export interface HeadDecider {
  /**
   * Reads in the request's `session`, whose organization picks the head; `values`: per text, the
   * value a verify decision asks about (verify only).
   */
  decide(
    definition: Definition,
    texts: string[],
    session: Session,
    values?: string[],
  ): Promise<HeadDecision | undefined>;
}
