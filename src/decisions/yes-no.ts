// yes-no: the probability that a statement is true of a text, from the model's log-probabilities
// of answering "Yes" versus "No" after one shared prefill of the text.
import type { Engine } from '../engine/engine.js';
import { ServiceError } from '../errors.js';
import { charsOf, type Billed } from './billing.js';
import { calibration, platt } from './distribution.js';
import { claimLine, Prompt } from './prompt.js';
import { Reader } from './windows.js';
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

  constructor(private readonly engine: Engine) {
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

    const read = await Promise.all(
      groups.map(({ text, statements: ss }) => (text === undefined ? undefined : this.reader.focus(text, ss))),
    );
    const jobs = groups.map(({ text, statements: ss }, i) => {
      const prompt = text === undefined ? this.withoutText : this.withText;
      // Everything before the statement is shared; branches stay short because each costs prefill.
      return {
        prefix: prompt.prefix(text === undefined ? '' : `Text: ${read[i]!.text}\n\n`),
        branches: ss.map((s) => prompt.branch(`${claimLine(s)}${hints}`)),
        options: this.options,
      };
    });
    const scored = await this.engine.score(jobs, signal);

    const judged = groups.map((g, i) => g.statements.map((s, b) => judge(s, scored[i]!.logprobs, b)));
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
      inputTokens: scored.reduce((n, r) => n + r.promptTokens, 0),
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
