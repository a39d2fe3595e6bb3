// System One's questions as the typed decisions they ask, apart from the decision that answers
// them (systemone.ts), so that what reads them after the answer (feedback/kept.ts keeps each as the
// decision a correction can teach) does not go back into it: a noul is yes-no's (its criteria as
// when_true / when_false), a choice classify's (its criteria as labels with their descriptions), a
// score rate's (its criteria as the scale); content is text as given or compact JSON.
import type { Content, Question } from '../api/systemone.js';
import type { Definition } from './head-decider.js';
import type { Label } from './labels.js';
import type { Hints } from './yes-no.js';

/** One question's answer for one state, as the wire gives it. */
export type SystemOneAnswer =
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; confidence: number; probabilities: Record<string, number> }
  | {
      type: 'score';
      score: number;
      confidence: number;
      legend: Record<string, Content>;
      probabilities: Record<string, number>;
    };

/** A state's answers, by question id. */
export type Answers = Record<string, SystemOneAnswer>;

/** The capability decision a question asks, as a fitted head knows it; a noul asking nothing has none. */
export function definitionOf(q: Question): Definition | undefined {
  if (q.type === 'noul') {
    return q.instructions == null
      ? undefined
      : { capability: 'yes-no', statement: render(q.instructions), ...hintsOf(q) };
  }
  if (q.type === 'choice') return { capability: 'classify', labels: labelsOf(q) };
  return { capability: 'rate', scale: q.criteria.map(render) };
}

/** An option that says yes, or no: its name and, when it has one, its description. */
const YES = /^(?:yes|true)\.?$/i;
const NO = /^(?:no|false)\.?$/i;

/**
 * A choice or score that asks a yes/no question: instructions, and two options, one that says yes
 * and one that says no ({yes: "Yes", no: "No"}, ["False", "True"]). It is the noul its instructions
 * ask, so it gets the noul's P(yes): `yes` is the index of its option that says so.
 */
export function yesNoOf(q: Question): { statement: string; yes: number } | undefined {
  if (q.type === 'noul' || q.instructions == null) return undefined;
  const options =
    q.type === 'choice'
      ? Object.entries(q.criteria).map(([name, d]) => [name, ...(d == null ? [] : [render(d)])])
      : q.criteria.map((l) => [render(l)]);
  if (options.length !== 2) return undefined;
  const says = (re: RegExp) => options.findIndex((words) => words.every((w) => re.test(w.trim())));
  const yes = says(YES);
  const no = says(NO);
  return yes >= 0 && no >= 0 && yes !== no ? { statement: render(q.instructions), yes } : undefined;
}

/** A noul's criteria as yes-no's hints. */
export function hintsOf(q: Question & { type: 'noul' }): Hints {
  return {
    ...(q.criteria?.true != null ? { when_true: render(q.criteria.true) } : {}),
    ...(q.criteria?.false != null ? { when_false: render(q.criteria.false) } : {}),
  };
}

/** A choice's criteria as classify's labels, their descriptions rendered. */
export function labelsOf(q: Question & { type: 'choice' }): Label[] {
  return Object.entries(q.criteria).map(([name, d]) => (d == null ? { name } : { name, description: render(d) }));
}

/** Text as given; a JSON object or array as compact JSON. */
export function render(content: Content): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}
