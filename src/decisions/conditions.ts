// An option whose description says when it applies, after a colon ("deny": "Refuse the return: the
// item was opened, or it was delivered more than 30 days ago"). Each condition is asked of the text
// as a yes/no question, as yes-no reads it (comparisons computed), and the option gains the log-odds
// that the likeliest of them holds; an option that states none gains nothing. A small model weighs a
// listing of rules against a text poorly, and answers each condition on its own far better
// (docs/capabilities.md, "Options with conditions"). Each option's evidence depends on its own
// description alone, so removing or reordering the others does not change it.
import type { Session } from '../engine/engine.js';
import type { Cost } from './cost.js';
import type { Label } from './labels.js';
import type { YesNo } from './yes-no.js';

// A condition's probability is kept within [BOUND, 1 - BOUND] (log-odds within 9.2 nats), so that a
// condition read as certain still leaves the listing's reading a say.
const BOUND = 1e-4;

// Where conditions part: a semicolon, a comma, an "or" (not the one of "3 or more", "30 days or less").
const BETWEEN = /;|,? or (?!(?:more|less|fewer|longer|shorter|later|earlier)\b)|, /;

/** The conditions a description states: what follows its first colon, one per "or", comma or semicolon. */
export function conditionsOf(description: string | undefined): string[] {
  const colon = description?.indexOf(':') ?? -1;
  if (colon < 0) return [];
  return description!
    .slice(colon + 1)
    .split(BETWEEN)
    .map((c) => c.trim().replace(/\.$/, ''))
    .filter(Boolean);
}

/** The yes/no question that asks a condition of a text. */
export function conditionQuestion(condition: string): string {
  return `Is this the case: ${condition}?`;
}

/** Each option's evidence (nats), given its conditions' probabilities: the log-odds of the likeliest; 0 without any. */
export function evidenceOf(probabilities: number[][]): number[] {
  return probabilities.map((ps) => {
    if (ps.length === 0) return 0;
    const p = Math.min(1 - BOUND, Math.max(BOUND, ...ps));
    return Math.log(p / (1 - p));
  });
}

export class Conditions {
  constructor(private readonly yesNo: YesNo) {}

  /**
   * Per text, each label's evidence from its conditions, read after the text's `prefix`; undefined
   * when no label states a condition (and `reads`, each text's prefix and read text, is not built).
   * `cost`: what each text's reading of them took.
   */
  async evidence(
    session: Session,
    labels: Label[],
    reads: () => { prefix: Int32Array; text: string }[],
  ): Promise<{ evidence: number[][]; cost: Cost[] } | undefined> {
    const questions = labels.map((l) => conditionsOf(l.description).map(conditionQuestion));
    const statements = [...new Set(questions.flat())];
    if (statements.length === 0) return undefined;
    const read = reads();
    const judged = await this.yesNo.judged(
      session,
      read.map((r) => ({ ...r, statements })),
    );
    return {
      evidence: read.map((_, i) => evidenceOf(questions.map((qs) => qs.map((q) => judged.probability(i, q))))),
      cost: judged.cost,
    };
  }
}
