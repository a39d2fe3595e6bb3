// yes-no: the probability that a statement is true of a text, from the model's log-probabilities
// of answering "Yes" versus "No" after one shared prefill of the text.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { ServiceError } from '../errors.js';
import { charsOf, type Billed } from './billing.js';
import { calibration, platt } from './distribution.js';
import { claimLine, Prompt } from './prompt.js';
import { Reader } from './windows.js';
import type { Learned } from './learned.js';
import type { Static } from '@sinclair/typebox';
import type { YesNoRequest, YesNoResult as YesNoResultSchema } from '../api/yes-no.js';

export type YesNoInput = Static<typeof YesNoRequest>;
export type YesNoResult = Static<typeof YesNoResultSchema>;

/** One result, a list (several texts or several statements), or texts x statements, text-major. */
export type YesNoOutput = YesNoResult | { results: YesNoResult[] } | { results: { results: YesNoResult[] }[] };

const SYSTEM =
  'You check statements against a text. Answer Yes if the text says or clearly implies that the ' +
  'statement is true, otherwise answer No. Reply with one word: Yes or No.';
const SYSTEM_NO_TEXT = 'You check whether statements are true. Reply with one word: Yes or No.';

// Case variants of each answer share its probability mass.
const YES = ['Yes', 'yes'];
const NO = ['No', 'no'];

export class YesNo {
  private readonly withText: Prompt;
  private readonly withoutText: Prompt;
  private readonly options: Int32Array[];
  private readonly reader: Reader;

  constructor(
    private readonly engine: Engine,
    private readonly heads?: Learned,
  ) {
    this.reader = new Reader(engine);
    this.withText = new Prompt(engine, SYSTEM);
    this.withoutText = new Prompt(engine, SYSTEM_NO_TEXT);
    this.options = [...YES, ...NO].map((o) => this.withText.option(o));
  }

  async run(input: YesNoInput, signal?: AbortSignal): Promise<Billed<YesNoOutput>> {
    const texts = [...(input.text !== undefined ? [input.text] : []), ...(input.texts ?? [])];
    const statements = [...(input.statement !== undefined ? [input.statement] : []), ...(input.statements ?? [])];
    if (texts.length === 0 && statements.length === 0) {
      throw new ServiceError('invalid_request', 'provide text, texts, statement or statements');
    }
    const textList = input.texts !== undefined;
    const statementList = input.statements !== undefined;
    const hints = this.hints(input);

    // Without statements each text is itself the claim; without texts statements stand alone.
    const groups: { text?: string; statements: string[] }[] =
      statements.length === 0
        ? texts.map((t) => ({ statements: [t] }))
        : texts.length === 0
          ? [{ statements }]
          : texts.map((text) => ({ text, statements }));

    // A statement with a fitted head (over texts) is decided by it; the others are read as usual.
    const score = (jobs: ScoreJob[]) => this.engine.score(jobs, signal);
    const headed = await this.headed(texts, statements, input, score);
    const read = await Promise.all(
      groups.map(({ text, statements: ss }) =>
        text === undefined || ss.every((s) => headed.decided.has(s))
          ? undefined
          : this.reader.focus(
              text,
              ss.filter((s) => !headed.decided.has(s)),
            ),
      ),
    );
    const jobs = groups.flatMap(({ text, statements: ss }, i) => {
      const prompt = text === undefined ? this.withoutText : this.withText;
      const open = text === undefined ? ss : ss.filter((s) => !headed.decided.has(s));
      if (open.length === 0) return [];
      // Everything before the statement is shared; branches stay short because each costs prefill.
      return [
        {
          group: i,
          open,
          job: {
            prefix: prompt.prefix(text === undefined ? '' : `Text: ${read[i]!.text}\n\n`),
            branches: open.map((s) => prompt.branch(`${claimLine(s)}${hints}`)),
            options: this.options,
          },
        },
      ];
    });
    const scored = await score(jobs.map((j) => j.job));
    const zeroShot = new Map(jobs.map((j, k) => [j.group, { open: j.open, logprobs: scored[k]!.logprobs }]));

    const judged = groups.map((g, i) =>
      g.statements.map((s) => {
        const p = g.text === undefined ? undefined : headed.decided.get(s)?.[i];
        if (p !== undefined) return { statement: s, answer: p >= 0.5, probability: p };
        const z = zeroShot.get(i)!;
        return judge(s, z.logprobs, z.open.indexOf(s));
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
      inputTokens: scored.reduce((n, r) => n + r.promptTokens, 0) + headed.promptTokens,
      ...(headed.ids.length > 0 ? { heads: headed.ids } : {}),
    };
  }

  /** The statements a fitted head decides over `texts`: P(true) per text, by statement. */
  private async headed(
    texts: string[],
    statements: string[],
    input: YesNoInput,
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
  ): Promise<{ decided: Map<string, number[]>; ids: string[]; promptTokens: number }> {
    const decided = new Map<string, number[]>();
    const ids: string[] = [];
    let promptTokens = 0;
    if (!this.heads || texts.length === 0) return { decided, ids, promptTokens };
    for (const statement of new Set(statements)) {
      const definition = { capability: 'yes-no' as const, statement, ...this.hintsOf(input) };
      const out = await this.heads.decide(definition, texts, score);
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

  private hintsOf(input: YesNoInput): { when_true?: string; when_false?: string } {
    return {
      ...(input.when_true ? { when_true: input.when_true } : {}),
      ...(input.when_false ? { when_false: input.when_false } : {}),
    };
  }

  private hints(input: YesNoInput): string {
    let s = '';
    if (input.when_true) s += `\nTrue when: ${input.when_true}`;
    if (input.when_false) s += `\nFalse when: ${input.when_false}`;
    return s;
  }
}

function judge(statement: string, logprobs: Float32Array, branch: number): YesNoResult {
  const n = YES.length + NO.length;
  const row = Array.from(logprobs.subarray(branch * n, branch * n + n), Math.exp);
  const yes = row.slice(0, YES.length).reduce((a, b) => a + b, 0);
  const no = row.slice(YES.length).reduce((a, b) => a + b, 0);
  const probability = platt(calibration['yes-no'], Math.log(yes) - Math.log(no));
  return { statement, answer: probability >= 0.5, probability };
}
