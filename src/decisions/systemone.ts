// System One: named noul / choice / score questions over one state. Each question is the decision
// it asks: a noul is yes-no's (its criteria as when_true / when_false), a choice classify's (the
// criteria as labels with their descriptions) and a score rate's (the criteria as the scale), the
// instructions read as the question, so each gets the numbers its typed route gives for the same
// text. A choice or score whose two options say yes and no asks its instructions as a noul does,
// and gets the noul's P(yes) (questions.ts, yesNoOf). Nouls and choices read the state's shared
// reading (reading.ts): the state is the prefix of one job and each of them branches after it (a
// noul one, a choice one per listing of its options), so the state is prefilled once for all of
// them. A score is read as rate reads, its scale before the state (a job of its own per state). A
// question's branches and options depend only on that question, so an answer does not change with
// the other questions of the request or their order (the options of the job are the union of every
// question's, and each answer reads only its own). Which decision a question asks: questions.ts.
import type { ScoreJob } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import type { Content, Question } from '../api/systemone.js';
import { charsOf, type BilledBody } from './billing.js';
import { promptTokensOf } from './cost.js';
import type { Classify, ClassifyResult } from './classify.js';
import type { Label } from './labels.js';
import type { Rate } from './rate.js';
import { Reading } from './reading.js';
import type { YesNo } from './yes-no.js';
import type { HeadDecider, HeadDecision } from './head-decider.js';
import { definitionOf, hintsOf, labelsOf, render, yesNoOf, type Answers, type SystemOneAnswer } from './questions.js';

/** A question's answers, one per state, and what reading them cost beyond the shared job. */
interface QuestionAnswers {
  id: string;
  answers: SystemOneAnswer[];
  promptTokens: number;
}

/** What a noul asks when it has no instructions. */
const BARE_NOUL = 'Is this true of the text?';

/** A noul or a choice as the decision it asks: its branches of the shared job and the options it reads. */
type QuestionBranch = { id: string; branches: Int32Array[]; options: Int32Array[] } & (
  | { type: 'noul'; question: Question & { type: 'noul' } }
  | { type: 'choice'; question: Question & { type: 'choice' }; labels: Label[]; instructions?: string }
);

export class SystemOne {
  private readonly reading: Reading;

  constructor(
    engine: Engine,
    private readonly decisions: { yesNo: YesNo; classify: Classify; rate: Rate },
    private readonly heads?: HeadDecider,
  ) {
    this.reading = new Reading(engine);
  }

  /** The answers for each state, in order: one job per state, all in the request's `session`. */
  async run(states: Content[], questions: Record<string, Question>, session: Session): Promise<BilledBody<Answers[]>> {
    const texts = states.map(render);
    // A question whose decision has a fitted head is answered by it; the others are read as usual.
    const byHeads = await this.byHeads(questions, texts, session);
    const open = Object.entries(questions)
      .filter(([id]) => !byHeads.has(id))
      .map(([id, q]) => [id, asNoul(q)] as const);
    const asked = open.flatMap(([id, q]) => (q.type === 'score' ? [] : [this.ask(id, q)]));
    const scores = open.flatMap(([id, q]) => (q.type === 'score' ? [{ id, q }] : []));
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
    // Every question's branches, one after another; each question keeps the indices of its own.
    const branches = asked.flatMap((a) => a.branches);
    let next = 0;
    const at = asked.map((a) => a.branches.map(() => next++));
    const excerpts = (asked.length === 0 ? [] : texts).map((text) => this.reading.reader.sample(text));
    const jobs = excerpts.map((excerpt) => ({
      prefix: this.reading.prefix(excerpt.original, excerpt),
      branches,
      options,
    }));
    const [scored, rated] = await Promise.all([
      session.score(jobs),
      Promise.all(scores.map(({ id, q }) => this.rate(id, q, texts, session))),
    ]);
    // Each question's rows, one per state: its own options in each of its branches, one after another.
    const rows = (q: number) =>
      scored.map((r) => at[q]!.flatMap((b) => picks[q]!.map((o) => r.logprobs[b * options.length + o]!)));
    // A noul is yes-no's decision, comparisons included (read once per state for all of them,
    // beside the choices' further readings).
    const { yesNo } = this.decisions;
    const nouls = asked.flatMap((a, q) =>
      a.type === 'noul' ? [{ a, rows: rows(q), statement: statementOf(a.question) }] : [],
    );
    const comparable = nouls.filter(({ a }) => !hasHints(a.question));
    const rowsOf = new Map(comparable.map((n) => [n.statement, n.rows])); // a statement's rows are its branch's
    const [compared, chosen] = await Promise.all([
      yesNo.compared(
        session,
        jobs.map((job, s) => ({
          prefix: job.prefix,
          text: excerpts[s]!.text,
          statements: comparable.map((n) => n.statement),
          direct: (statement) => yesNo.probability(rowsOf.get(statement)![s]!),
        })),
      ),
      Promise.all(asked.flatMap((a, q) => (a.type === 'choice' ? [this.choose(a, rows(q), texts, session)] : []))),
    ]);
    const decided = nouls.map(({ a, rows, statement }) =>
      this.noul(a, rows, (s) => (hasHints(a.question) ? undefined : compared.probability(s, statement))),
    );
    const all = [...decided, ...chosen, ...rated];
    const read = new Map(all.map((d) => [d.id, d.answers]));
    const promptTokens = promptTokensOf([...scored, ...compared.cost, ...all]);
    const body = texts.map((_, s) => {
      const answered = new Map([...read].map(([id, answers]) => [id, answers[s]!]));
      return Object.fromEntries(
        Object.entries(questions).map(([id, q]) => {
          const l = byHeads.get(id);
          return [id, l ? headAnswer(q, l.outcomes, l.probabilities[s]!) : answerTo(q, answered.get(id)!)];
        }),
      );
    });
    const heads = [...new Set([...byHeads.values()].map((l) => l.head))];
    return {
      body,
      inputChars:
        charsOf(texts) +
        open.reduce(
          (n, [id]) => n + render(questions[id]!.instructions ?? '').length + criteriaChars(questions[id]!),
          0,
        ) *
          states.length,
      inputTokens: promptTokens + promptTokensOf([...byHeads.values()]),
      ...(heads.length > 0 ? { heads } : {}),
    };
  }

  /** The questions a fitted head answers: noul as yes-no, choice as classify, score as rate. */
  private async byHeads(
    questions: Record<string, Question>,
    texts: string[],
    session: Session,
  ): Promise<Map<string, HeadDecision>> {
    const out = new Map<string, HeadDecision>();
    if (!this.heads) return out;
    for (const [id, q] of Object.entries(questions)) {
      const definition = definitionOf(q);
      const decided = definition && (await this.heads.decide(definition, texts, session));
      if (decided) out.set(id, decided);
    }
    return out;
  }

  private ask(id: string, q: Question & { type: 'noul' | 'choice' }): QuestionBranch {
    const { yesNo, classify } = this.decisions;
    const instructions = q.instructions == null ? undefined : render(q.instructions);
    if (q.type === 'noul') {
      return {
        id,
        type: 'noul',
        question: q,
        branches: [yesNo.branch(statementOf(q), hintsOf(q))],
        options: yesNo.options,
      };
    }
    const labels = labelsOf(q);
    return {
      id,
      type: 'choice',
      question: q,
      labels,
      ...(instructions === undefined ? {} : { instructions }),
      branches: classify.branches(labels, instructions),
      options: classify.options(labels),
    };
  }

  /** A noul's answer for each state: yes-no's reading of its `rows`, or `compared` where it is a comparison. */
  private noul(
    a: QuestionBranch & { type: 'noul' },
    rows: number[][],
    compared: (state: number) => number | undefined,
  ): QuestionAnswers {
    return {
      id: a.id,
      answers: rows.map((row, s) => ({
        type: 'noul',
        noul: compared(s) ?? this.decisions.yesNo.probability(row),
      })),
      promptTokens: 0,
    };
  }

  /** A choice's answer for each state from its reading's `rows`, as classify settles it. */
  private async choose(
    a: QuestionBranch & { type: 'choice' },
    rows: number[][],
    texts: string[],
    session: Session,
  ): Promise<QuestionAnswers> {
    const asked = { first: rows, ...(a.instructions === undefined ? {} : { question: a.instructions }) };
    const { results, cost } = await this.decisions.classify.classified(session, texts, a.labels, asked);
    return { id: a.id, answers: results.map(choiceAnswer), promptTokens: promptTokensOf(cost) };
  }

  /** A score's answer for each state, as rate decides it. */
  private async rate(
    id: string,
    q: Question & { type: 'score' },
    texts: string[],
    session: Session,
  ): Promise<QuestionAnswers> {
    const instructions = q.instructions == null ? undefined : render(q.instructions);
    const score = (jobs: ScoreJob[]) => session.score(jobs);
    const { results, cost } = await this.decisions.rate.rated(score, texts, q.criteria.map(render), instructions);
    return {
      id,
      answers: results.map((r) => scoreOf(q, r.scores)),
      promptTokens: promptTokensOf(cost),
    };
  }
}

/** A choice or score that asks yes or no as the noul it asks (yesNoOf); any other question as it is. */
function asNoul(q: Question): Question {
  const binary = yesNoOf(q);
  return binary ? { type: 'noul', instructions: binary.statement } : q;
}

/** `q`'s answer from what was read for it: a yes/no choice or score from its noul's P(yes). */
function answerTo(q: Question, read: SystemOneAnswer): SystemOneAnswer {
  const binary = yesNoOf(q);
  if (!binary || read.type !== 'noul' || q.type === 'noul') return read;
  const p = [0, 1].map((k) => (k === binary.yes ? read.noul : 1 - read.noul));
  return q.type === 'choice' ? choiceOf(Object.keys(q.criteria).map((name, k) => [name, p[k]!])) : scoreOf(q, p);
}

/** The statement a noul asks: its instructions, or BARE_NOUL. */
function statementOf(q: Question & { type: 'noul' }): string {
  return q.instructions == null ? BARE_NOUL : render(q.instructions);
}

/** Whether a noul's criteria define what makes it true or false (yes-no's hints). */
function hasHints(q: Question & { type: 'noul' }): boolean {
  return Object.keys(hintsOf(q)).length > 0;
}

/** A question's answer from a head's probabilities over its outcomes (yes-no: [false, true]). */
function headAnswer(q: Question, outcomes: string[], p: number[]): SystemOneAnswer {
  if (q.type === 'noul') return { type: 'noul', noul: p[1]! };
  if (q.type === 'choice') {
    const byName = new Map(outcomes.map((name, k) => [name, p[k]!]));
    return choiceOf(Object.keys(q.criteria).map((name) => [name, byName.get(name)!]));
  }
  return scoreOf(q, p);
}

function choiceAnswer(r: ClassifyResult): SystemOneAnswer {
  return choiceOf(Object.entries(r.scores));
}

/** A choice answer from each option's probability, in the question's order. */
function choiceOf(scores: [string, number][]): SystemOneAnswer {
  const p = scores.map(([, x]) => x);
  const best = p.indexOf(Math.max(...p));
  return {
    type: 'choice',
    choice: scores[best]![0],
    confidence: choiceConfidence(p),
    probabilities: Object.fromEntries(scores),
  };
}

/** A score answer from each level's probability: the expected level, its confidence, the legend. */
function scoreOf(q: Question & { type: 'score' }, p: number[]): SystemOneAnswer {
  const best = p.indexOf(Math.max(...p));
  return {
    type: 'score',
    score: p.reduce((s, x, i) => s + x * i, 0),
    confidence: scoreConfidence(p, best),
    legend: Object.fromEntries(q.criteria.map((l, i) => [String(i), l])),
    probabilities: Object.fromEntries(p.map((x, i) => [String(i), x])),
  };
}

function criteriaChars(q: Question): number {
  if (q.type === 'noul')
    return q.criteria ? render(q.criteria.true ?? '').length + render(q.criteria.false ?? '').length : 0;
  if (q.type === 'choice')
    return Object.entries(q.criteria).reduce((n, [k, d]) => n + k.length + (d == null ? 0 : render(d).length), 0);
  return q.criteria.reduce((n: number, l) => n + render(l).length, 0);
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
