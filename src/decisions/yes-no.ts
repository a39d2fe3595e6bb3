// yes-no: the probability that a statement is true of a text, from the model's log-probabilities
// of answering "Yes" versus "No" after one shared prefill of the text.
import type { ScoreResult } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { ERRORS } from '../errors.js';
import { charsOf, type BilledBody } from './billing.js';
import { costOf, promptTokensOf, type Cost } from './cost.js';
import { Comparisons } from './comparison.js';
import { calibration, platt } from './distribution.js';
import { claimLines, Prompt } from './prompt.js';
import { Reading } from './reading.js';
import type { HeadDecider } from './head-decider.js';
import type { Static } from '@sinclair/typebox';
import type { YesNoRequest, YesNoResult as YesNoResultSchema } from '../api/yes-no.js';

export type YesNoInput = Static<typeof YesNoRequest>;
export type YesNoResult = Static<typeof YesNoResultSchema>;

/** One result, a list (several texts or several statements), or texts x statements, text-major. */
export type YesNoOutput = YesNoResult | { results: YesNoResult[] } | { results: { results: YesNoResult[] }[] };

const SYSTEM_NO_TEXT = 'You check whether statements are true. Reply with one word: Yes or No.';

// Case variants of each answer share its probability mass.
const YES = ['Yes', 'yes'];
const NO = ['No', 'no'];

/** What makes a statement true or false, when the asker says (yes-no's when_true / when_false). */
export interface Hints {
  when_true?: string;
  when_false?: string;
}

export class YesNo {
  private readonly reading: Reading;
  private readonly withoutText: Prompt;
  private readonly comparisons: Comparisons;
  /** The options every statement's branch reads: the case variants of Yes, then of No. */
  readonly options: Int32Array[];

  constructor(
    engine: Engine,
    private readonly heads?: HeadDecider,
  ) {
    this.reading = new Reading(engine);
    this.withoutText = new Prompt(engine, SYSTEM_NO_TEXT);
    this.options = [...YES, ...NO].map((o) => this.reading.prompt.option(o));
    this.comparisons = new Comparisons(this.reading.prompt);
  }

  /** The branch that asks `statement` of a text after the reading's prefix. */
  branch(statement: string, hints: Hints = {}): Int32Array {
    return this.reading.prompt.branch(claimLines(statement, hints));
  }

  /** A statement's calibrated P(true) from its branch's log-probabilities of `options`. */
  probability(row: ArrayLike<number>): number {
    const p = Array.from(row, Math.exp);
    const yes = p.slice(0, YES.length).reduce((a, b) => a + b, 0);
    const no = p.slice(YES.length).reduce((a, b) => a + b, 0);
    return platt(calibration['yes-no'], Math.log(yes) - Math.log(no));
  }

  /** `statement`'s P(true) from a job whose branches asked `statements`, in that order. */
  private probabilityOf(result: ScoreResult, statements: string[], statement: string): number {
    const n = this.options.length;
    const b = statements.indexOf(statement);
    return this.probability(result.logprobs.subarray(b * n, (b + 1) * n));
  }

  /**
   * Each read text's statements' P(true): `direct` (its branch's probability), except for a
   * statement that compares a quantity with a number (comparison.ts), which is read again in one job
   * per text after the same `prefix` (the slot keeps its prefill) and computed. `statements` are the
   * ones that may be read so: a statement with hints is the asker's own definition and is not.
   */
  async compared(
    session: Session,
    reads: { prefix: Int32Array; text: string; statements: string[]; direct: (statement: string) => number }[],
  ): Promise<{ probability: (read: number, statement: string) => number; cost: Cost[] }> {
    const planned = reads.map((r) => this.comparisons.job(r.prefix, r.text, r.statements));
    const jobs = planned.flatMap((p) => (p ? [p.job] : []));
    const scored = jobs.length === 0 ? [] : await session.score(jobs);
    let k = 0;
    const read = planned.map((p) => (p ? { p, result: scored[k++]! } : undefined));
    const computed = read.map((r, i) => r && this.comparisons.probabilities(r.p, r.result, reads[i]!.direct));
    return {
      probability: (at, statement) => computed[at]?.get(statement) ?? reads[at]!.direct(statement),
      cost: read.map((r) => (r ? branchesCost(r.result, r.p.job.prefix) : costOf())),
    };
  }

  /**
   * The P(true) of each read's `statements` after its `prefix` (the shared reading of `text`, which
   * the caller has read): one job of their branches, then their comparisons. What a decision built
   * on yes-no asks of a text it reads (classify's option conditions, conditions.ts).
   */
  async judged(
    session: Session,
    reads: { prefix: Int32Array; text: string; statements: string[] }[],
  ): Promise<{ probability: (read: number, statement: string) => number; cost: Cost[] }> {
    const scored = await session.score(
      reads.map((r) => ({
        prefix: r.prefix,
        branches: r.statements.map((s) => this.branch(s)),
        options: this.options,
      })),
    );
    const compared = await this.compared(
      session,
      reads.map((r, i) => ({ ...r, direct: (s: string) => this.probabilityOf(scored[i]!, r.statements, s) })),
    );
    return {
      probability: compared.probability,
      cost: reads.map((r, i) => costOf(branchesCost(scored[i]!, r.prefix), compared.cost[i])),
    };
  }

  async run(input: YesNoInput, session: Session): Promise<BilledBody<YesNoOutput>> {
    const texts = [...(input.text !== undefined ? [input.text] : []), ...(input.texts ?? [])];
    const statements = [...(input.statement !== undefined ? [input.statement] : []), ...(input.statements ?? [])];
    if (texts.length === 0 && statements.length === 0) {
      throw ERRORS.invalidRequest('provide text, texts, statement or statements');
    }
    const textList = input.texts !== undefined;
    const statementList = input.statements !== undefined;
    const hints = hintsOf(input);

    // Without statements each text is itself the claim; without texts statements stand alone.
    const groups: { text?: string; statements: string[] }[] =
      statements.length === 0
        ? texts.map((t) => ({ statements: [t] }))
        : texts.length === 0
          ? [{ statements }]
          : texts.map((text) => ({ text, statements }));

    // A statement with a fitted head (over texts) is decided by it; the others are read as usual.
    const headed = await this.headed(texts, statements, input, session);
    const read = await Promise.all(
      groups.map(({ text, statements: ss }) =>
        text === undefined || ss.every((s) => headed.decided.has(s))
          ? undefined
          : this.reading.reader.focus(
              session,
              text,
              ss.filter((s) => !headed.decided.has(s)),
            ),
      ),
    );
    const jobs = groups.flatMap(({ text, statements: ss }, i) => {
      const open = text === undefined ? ss : ss.filter((s) => !headed.decided.has(s));
      if (open.length === 0) return [];
      // Everything before the statement is shared; branches stay short because each costs prefill.
      const job =
        text === undefined
          ? {
              prefix: this.withoutText.prefix(''),
              branches: open.map((s) => this.withoutText.branch(claimLines(s, hints))),
              options: this.options,
            }
          : {
              prefix: this.reading.prefix(text, read[i]),
              branches: open.map((s) => this.branch(s, hints)),
              options: this.options,
            };
      return [{ group: i, open, job }];
    });
    const scored = await session.score(jobs.map((j) => j.job));
    const direct = (k: number) => (s: string) => this.probabilityOf(scored[k]!, jobs[k]!.open, s);
    // Statements judged on their own, or with hints, are not read as comparisons.
    const comparable = (j: (typeof jobs)[number]) =>
      groups[j.group]!.text === undefined || Object.keys(hints).length > 0 ? [] : j.open;
    const compared = await this.compared(
      session,
      jobs.map((j, k) => ({
        prefix: j.job.prefix,
        text: read[j.group]?.text ?? '',
        statements: comparable(j),
        direct: direct(k),
      })),
    );
    const jobOf = new Map(jobs.map((j, k) => [j.group, k]));

    const judged = groups.map((g, i) =>
      g.statements.map((s) => {
        const p = g.text === undefined ? undefined : headed.decided.get(s)?.[i];
        if (p !== undefined) return { statement: s, answer: p >= 0.5, probability: p };
        const probability = compared.probability(jobOf.get(i)!, s);
        return { statement: s, answer: probability >= 0.5, probability };
      }),
    );
    let body: YesNoOutput;
    if (texts.length > 0 && statements.length > 0) {
      if (textList && statementList) body = { results: judged.map((results) => ({ results })) };
      else if (textList) body = { results: judged.map((r) => r[0]!) };
      else if (statementList) body = { results: judged[0]! };
      else body = judged[0]![0]!;
    } else {
      const flat = judged.flat();
      body = textList || statementList ? { results: flat } : flat[0]!;
    }
    return {
      body,
      inputChars: charsOf(
        input.text,
        input.texts,
        input.statement,
        input.statements,
        input.when_true,
        input.when_false,
      ),
      inputTokens: promptTokensOf([...scored, ...compared.cost]) + headed.promptTokens,
      ...(headed.ids.length > 0 ? { heads: headed.ids } : {}),
    };
  }

  /** The statements a fitted head decides over `texts`: P(true) per text, by statement. */
  private async headed(
    texts: string[],
    statements: string[],
    input: YesNoInput,
    session: Session,
  ): Promise<{ decided: Map<string, number[]>; ids: string[]; promptTokens: number }> {
    const decided = new Map<string, number[]>();
    const ids: string[] = [];
    let promptTokens = 0;
    if (!this.heads || texts.length === 0) return { decided, ids, promptTokens };
    for (const statement of new Set(statements)) {
      const definition = { capability: 'yes-no' as const, statement, ...hintsOf(input) };
      const out = await this.heads.decide(definition, texts, session);
      if (!out) continue;
      decided.set(
        statement,
        out.probabilities.map((p) => p[1]!),
      );
      ids.push(out.head);
      promptTokens += out.promptTokens;
    }
    return { decided, ids, promptTokens };
  }
}

/** What a job after a prefix the caller has read costs: its branches (the text is billed once). */
function branchesCost(result: ScoreResult, prefix: Int32Array): Cost {
  return { promptTokens: result.promptTokens - prefix.length, decodeMs: result.decodeMs };
}

/** The request's hints, the empty ones left out. */
function hintsOf(input: Hints): Hints {
  return {
    ...(input.when_true ? { when_true: input.when_true } : {}),
    ...(input.when_false ? { when_false: input.when_false } : {}),
  };
}
