// What a decision asks of the heads a deployment fitted on its own labels (src/heads implements
// it): given the decision's definition and its texts, the probabilities of its outcomes by the head
// fitted for that definition, or undefined when there is none (the decision reads zero-shot).
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Label } from './labels.js';

/** What defines a decision, whatever text it is asked of. */
export type Definition =
  | { capability: 'yes-no'; statement: string; when_true?: string; when_false?: string }
  | { capability: 'classify'; labels: Label[] }
  | { capability: 'rate'; scale: string[] };

/**
 * Each text's probabilities over the definition's outcomes (yes-no: [false, true]; classify: the
 * labels in `outcomes` order; rate: the levels), by the head named `head`.
 */
export interface LearnedDecision {
  head: string;
  outcomes: string[];
  probabilities: number[][];
  promptTokens: number;
}

export interface Learned {
  decide(
    definition: Definition,
    texts: string[],
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
  ): Promise<LearnedDecision | undefined>;
}
