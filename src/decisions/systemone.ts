// System One: named noul / choice / score questions over one state, answered with one prefill of
// the state. The state is the shared prefix and each question is a branch after it, as yes-no's
// statements are; every branch is scored on the option likelihoods classify and rate use. A
// question's branch and options depend only on that question, so an answer does not change with
// the other questions of the request or their order (the options of one job are the union of
// every question's, and each answer reads only its own). Choice scores are calibrated as classify's
// are (label-priors.ts): each choice question's options are also scored after a content-free
// text, once per question (cached), and that prior is divided out.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine, Round } from '../engine/engine.js';
import type { Content, Question } from '../api/systemone.js';
import { charsOf, type Billed } from './billing.js';
import { argmax, normalise } from './distribution.js';
import { calibrated, CONTENT_FREE_TEXT } from './label-priors.js';
import { claimLine, Prompt } from './prompt.js';
import { Reader } from './windows.js';
import type { Definition, Learned, LearnedDecision } from './learned.js';

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

export type Answers = Record<string, SystemOneAnswer>;

// The rules live here, in the part of the prompt every request shares (cached), so the branches
// (what each question costs after the state) stay short.
const SYSTEM =
  'You answer questions about a text. A statement or yes/no question: reply Yes if the text says or ' +
  'clearly implies it, otherwise No. A choice: reply with the best option name exactly as written. ' +
  'A scale: reply with the number of the level that fits best. Reply with that alone, nothing else.';

// Case variants of each answer share its probability mass (as in yes-no).
const YES = ['Yes', 'yes'];
const NO = ['No', 'no'];

/** A question as one branch of the job and the options it reads. */
interface Asked {
  id: string;
  question: Question;
  branch: Int32Array;
  options: Int32Array[];
}

const CACHED_PRIORS = 1024;

export class SystemOne {
  private readonly priors = new Map<string, Promise<number[]>>();
  private readonly prompt: Prompt;
  private readonly reader: Reader;
  private readonly yesNo: Int32Array[];
  private readonly digits: Int32Array[];

  constructor(
    private readonly engine: Engine,
    private readonly heads?: Learned,
  ) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.yesNo = [...YES, ...NO].map((o) => this.prompt.option(o));
    this.digits = Array.from({ length: 10 }, (_, i) => this.prompt.option(String(i)));
  }

  /** The answers for each state, in order: one job per state, all in one engine session. */
  async run(states: Content[], questions: Record<string, Question>, signal?: AbortSignal): Promise<Billed<Answers[]>> {
    const texts = states.map(render);
    // A question whose decision has a fitted head is answered by it; the others are read as usual.
    const learned = await this.learned(questions, texts, (jobs) => this.engine.score(jobs, signal));
    const asked = Object.entries(questions)
      .filter(([id]) => !learned.has(id))
      .map(([id, q]) => this.ask(id, q));
    // The union of every question's options; each question keeps the indices of its own.
    const union = new Map<string, number>();
    const options: Int32Array[] = [];
    const picks = asked.map((a) =>
      a.options.map((o) => {
        const key = o.join(',');
        if (!union.has(key)) union.set(key, options.push(o) - 1);
        return union.get(key)!;
      }),
    );
    const jobs = (asked.length === 0 ? [] : texts).map((text) => ({
      prefix: this.prompt.prefix(text === '' ? '' : `Text: ${this.reader.sample(text).text}\n\n`),
      branches: asked.map((a) => a.branch),
      options,
    }));
    const [scored, priors] = await this.engine.session(
      (run) => Promise.all([run.score(jobs), Promise.all(this.priorsOf(asked, run))]),
      signal,
    );
    const body = texts.map((_, s) => {
      const read = Object.fromEntries(
        asked.map((a, b) => {
          const r = scored[s]!;
          const logprobs = priors[b]
            ? calibrated(row(r, b, options.length, picks[b]!), priors[b]!)
            : row(r, b, options.length, picks[b]!);
          return [a.id, answer(a.question, logprobs)];
        }),
      );
      return Object.fromEntries(
        Object.entries(questions).map(([id, q]) => {
          const l = learned.get(id);
          return [id, l ? learnedAnswer(q, l.outcomes, l.probabilities[s]!) : read[id]!];
        }),
      );
    });
    const heads = [...new Set([...learned.values()].map((l) => l.head))];
    return {
      body,
      inputChars:
        charsOf(texts) +
        asked.reduce((n, a) => n + render(a.question.instructions ?? '').length + criteriaChars(a.question), 0) *
          states.length,
      inputTokens:
        scored.reduce((n, r) => n + r.promptTokens, 0) + [...learned.values()].reduce((n, l) => n + l.promptTokens, 0),
      ...(heads.length > 0 ? { heads } : {}),
    };
  }

  /** The questions a fitted head answers: noul as yes-no, choice as classify, score as rate. */
  private async learned(
    questions: Record<string, Question>,
    texts: string[],
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
  ): Promise<Map<string, LearnedDecision>> {
    const out = new Map<string, LearnedDecision>();
    if (!this.heads) return out;
    for (const [id, q] of Object.entries(questions)) {
      const definition = definitionOf(q);
      const decided = definition && (await this.heads.decide(definition, texts, score));
      if (decided) out.set(id, decided);
    }
    return out;
  }

  /** Per question, its options' log-probabilities after a content-free text (choice questions only). */
  private priorsOf(asked: Asked[], run: Round): (Promise<number[]> | undefined)[] {
    const missing: { key: string; a: Asked }[] = [];
    const found = new Map<string, Promise<number[]>>();
    const keys = asked.map((a) => {
      if (a.question.type !== 'choice') return undefined;
      const key = `${a.branch.join(',')}|${a.options.map((o) => o.join(',')).join(';')}`;
      const cached = this.priors.get(key);
      if (cached) found.set(key, cached);
      else if (!missing.some((m) => m.key === key)) missing.push({ key, a });
      return key;
    });
    // One job scores every missing prior: each branch reads its own options only.
    if (missing.length > 0) {
      const options = [
        ...new Map(missing.flatMap(({ a }) => a.options.map((o) => [o.join(','), o] as const))).values(),
      ];
      const index = new Map(options.map((o, i) => [o.join(','), i]));
      const job: ScoreJob = {
        prefix: this.prompt.prefix(`Text: ${CONTENT_FREE_TEXT}\n\n`),
        branches: missing.map(({ a }) => a.branch),
        options,
      };
      const scored = run.score([job]).then(([r]) => r!);
      missing.forEach(({ key, a }, b) => {
        const prior = scored.then((r) =>
          row(
            r,
            b,
            options.length,
            a.options.map((o) => index.get(o.join(','))!),
          ),
        );
        prior.catch(() => this.priors.delete(key)); // a cancelled or failed prior is computed again next time
        this.priors.set(key, prior);
        found.set(key, prior);
        if (this.priors.size > CACHED_PRIORS) this.priors.delete(this.priors.keys().next().value!);
      });
    }
    return keys.map((key) => (key === undefined ? undefined : found.get(key)));
  }

  private ask(id: string, q: Question): Asked {
    const instructions = q.instructions == null ? undefined : render(q.instructions);
    if (q.type === 'noul') {
      const lines = [instructions === undefined ? 'Question: is this true of the text?' : claimLine(instructions)];
      if (q.criteria?.true != null) lines.push(`Yes when: ${render(q.criteria.true)}`);
      if (q.criteria?.false != null) lines.push(`No when: ${render(q.criteria.false)}`);
      lines.push('Yes or No?');
      return { id, question: q, branch: this.prompt.branch(lines.join('\n')), options: this.yesNo };
    }
    if (q.type === 'choice') {
      const names = Object.keys(q.criteria);
      const list = Object.entries(q.criteria).map(([name, d]) => (d == null ? `- ${name}` : `- ${name}: ${render(d)}`));
      const text = `Question: ${instructions ?? 'Which option fits the text best?'}\nOptions:\n${list.join('\n')}\n\nThe best option:`;
      return { id, question: q, branch: this.prompt.branch(text), options: this.prompt.choices(names) };
    }
    const top = q.criteria.length - 1;
    const levels = q.criteria.map((l, i) => `${i}: ${render(l)}`).join('\n');
    const text = `Question: ${instructions ?? 'Which level fits the text?'}\nScale from 0 (lowest) to ${top} (highest):\n${levels}\n\nThe level:`;
    return { id, question: q, branch: this.prompt.branch(text), options: this.digits.slice(0, q.criteria.length) };
  }
}

/** The capability decision a question asks, as a fitted head knows it; a noul asking nothing has none. */
function definitionOf(q: Question): Definition | undefined {
  if (q.type === 'noul') {
    if (q.instructions == null) return undefined;
    return {
      capability: 'yes-no',
      statement: render(q.instructions),
      ...(q.criteria?.true != null ? { when_true: render(q.criteria.true) } : {}),
      ...(q.criteria?.false != null ? { when_false: render(q.criteria.false) } : {}),
    };
  }
  if (q.type === 'choice') {
    const labels = Object.entries(q.criteria).map(([name, d]) =>
      d == null ? { name } : { name, description: render(d) },
    );
    return { capability: 'classify', labels };
  }
  return { capability: 'rate', scale: q.criteria.map(render) };
}

/** A question's answer from a head's probabilities over its outcomes (yes-no: [false, true]). */
function learnedAnswer(q: Question, outcomes: string[], p: number[]): SystemOneAnswer {
  if (q.type === 'noul') return { type: 'noul', noul: p[1]! };
  if (q.type === 'choice') {
    const byName = new Map(outcomes.map((name, k) => [name, p[k]!]));
    return answer(
      q,
      Object.keys(q.criteria).map((name) => Math.log(byName.get(name)!)),
    );
  }
  return answer(q, p.map(Math.log));
}

/** Text as given; a JSON object or array as compact JSON. */
export function render(content: Content): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

function criteriaChars(q: Question): number {
  if (q.type === 'noul')
    return q.criteria ? render(q.criteria.true ?? '').length + render(q.criteria.false ?? '').length : 0;
  if (q.type === 'choice')
    return Object.entries(q.criteria).reduce((n, [k, d]) => n + k.length + (d == null ? 0 : render(d).length), 0);
  return q.criteria.reduce((n: number, l) => n + render(l).length, 0);
}

/** Branch `b`'s log-probabilities of the options at `picks`. */
function row(r: ScoreResult, b: number, width: number, picks: number[]): number[] {
  return picks.map((o) => r.logprobs[b * width + o]!);
}

function answer(q: Question, logprobs: number[]): SystemOneAnswer {
  if (q.type === 'noul') {
    const p = logprobs.map(Math.exp);
    const yes = p.slice(0, YES.length).reduce((a, b) => a + b, 0);
    const no = p.slice(YES.length).reduce((a, b) => a + b, 0);
    return { type: 'noul', noul: yes / (yes + no) };
  }
  const p = normalise(logprobs);
  const best = argmax(p);
  if (q.type === 'choice') {
    const names = Object.keys(q.criteria);
    return {
      type: 'choice',
      choice: names[best]!,
      confidence: choiceConfidence(p),
      probabilities: Object.fromEntries(names.map((n, i) => [n, p[i]!])),
    };
  }
  return {
    type: 'score',
    score: p.reduce((s, x, i) => s + x * i, 0),
    confidence: scoreConfidence(p, best),
    legend: Object.fromEntries(q.criteria.map((l, i) => [String(i), l])),
    probabilities: Object.fromEntries(p.map((x, i) => [String(i), x])),
  };
}

/** System One's choice confidence: the top probability's place between uniform (0) and certain (1). */
export function choiceConfidence(p: number[]): number {
  const n = p.length;
  return n < 2 ? 1 : Math.min(1, Math.max(0, (Math.max(...p) - 1 / n) / (1 - 1 / n)));
}

/** System One's score confidence: 1 minus the expected distance from the mode, over the uniform distribution's. */
export function scoreConfidence(p: number[], mode: number): number {
  const n = p.length;
  if (n < 2) return 1;
  const spread = p.reduce((s, x, i) => s + x * Math.abs(i - mode), 0);
  let uniform = 0;
  for (let i = 0; i < n; i++) uniform += Math.abs(i - (n - 1) / 2) / n;
  return Math.min(1, Math.max(0, 1 - spread / uniform));
}
