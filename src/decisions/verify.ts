// verify: what the text says for a field (the span kernel copies every value it gives), whether
// the given value agrees with it (numbers compared as numbers: "2,000 USD" matches 2000, "three"
// matches 3), and the model's probability that the text states this value for the field. With a
// head fitted for the field (src/heads), the head decides `matches` and `probability`; `found`
// is still the route's own reading.
import type { ScoreJob } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { charsOf, type Billed } from './billing.js';
import { calibration, platt } from './distribution.js';
import { numberIn } from './numbers.js';
import { Prompt } from './prompt.js';
import { Source } from './source.js';
import { Reader } from './windows.js';
import { shaped, textsOf } from './texts.js';
import type { Learned } from './learned.js';
import type { Static } from '@sinclair/typebox';
import type { VerifyRequest, VerifyResult as VerifyResultSchema } from '../api/verify.js';

export type VerifyInput = Static<typeof VerifyRequest>;
export type VerifyResult = Static<typeof VerifyResultSchema>;

// One system prompt for both branches: finding the values and checking the given one.
const SYSTEM =
  'You read a field from a text. Copy every value the text gives for the field, exact words from the text, ' +
  'one per line; if the text gives no value for it, reply None. Asked a yes/no question, reply Yes or No.';

export class Verify {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly separator: number;
  private readonly yesNo: Int32Array; // the first tokens of "Yes" and "No"
  private readonly reader: Reader;

  constructor(
    private readonly engine: Engine,
    private readonly heads?: Learned,
  ) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
    this.separator = this.prompt.option('\n')[0]!;
    this.yesNo = Int32Array.from(['Yes', 'No'], (o) => this.prompt.option(o)[0]!);
  }

  async run(input: VerifyInput, signal?: AbortSignal): Promise<Billed<VerifyResult | { results: VerifyResult[] }>> {
    const { texts, list } = textsOf(input);
    const field = input.field.description ? `${input.field.name} (${input.field.description})` : input.field.name;
    const value = String(input.value);
    const excerpts = await Promise.all(texts.map((t) => this.reader.focus(t, [`${field}: ${value}`])));
    const sources = excerpts.map((e) => new Source(this.engine, e));
    // One job per text: the find branch copies the field's values, the check branch (asked on
    // the same prefill) scores Yes against No at its first step.
    const how = {
      separator: this.separator,
      none: this.none,
      maxSpanTokens: 24,
      maxSpans: 4,
      minListLogprob: Math.log(0.5),
      firstOptions: this.yesNo,
      scoredBranches: 1,
    };
    const branches = [
      this.prompt.branch(`Field: ${field}`),
      this.prompt.branch(`Yes or no: does the text give "${value}" as the ${field}?`),
    ];
    const score = (jobs: ScoreJob[]) => this.engine.score(jobs, signal);
    const fieldDefinition = {
      name: input.field.name,
      ...(input.field.description ? { description: input.field.description } : {}),
    };
    const [found, learned] = await Promise.all([
      this.engine.spans(
        sources.map((source) => source.job(this.prompt.prefix(`Text: ${source.text}\n\n`), branches, how)),
        signal,
      ),
      this.heads?.decide(
        { capability: 'verify', field: fieldDefinition },
        texts,
        score,
        texts.map(() => value),
      ),
    ]);
    const results = sources.map((source, i): VerifyResult => {
      const r = found[i]!;
      const spans = r.spans[0]!;
      const given = spans.length > 0 && r.noneLogprobs[0]! <= spans[0]!.firstLogprob;
      const values = given ? spans.map((s) => source.span(s.start, s.end)?.text).filter((t): t is string => !!t) : [];
      const [yes, no] = r.firstLogprobs.subarray(2, 4); // the check branch: Yes, No
      // The model's judgement and whether a value the text gives agrees (+1), none does (-1) or the
      // text gives none (0), mapped to one probability by the fitted map; it decides.
      const agreement = values.length === 0 ? 0 : values.some((v) => agrees(v, input.value)) ? 1 : -1;
      const probability = learned ? learned.probabilities[i]![1]! : platt(calibration.verify, yes! - no!, agreement);
      const matches = probability >= 0.5;
      return { matches, probability, found: [...new Set(values)] };
    });
    return {
      body: shaped(results, list),
      inputChars:
        charsOf(input.text, input.texts) +
        (charsOf(input.field.name, input.field.description) + value.length) * texts.length,
      inputTokens: found.reduce((n, r) => n + r.promptTokens, 0) + (learned?.promptTokens ?? 0),
      ...(learned ? { heads: [learned.head] } : {}),
    };
  }
}

/** A found span agrees with the value: as numbers when both carry one, else as normalised words. */
export function agrees(found: string, value: string | number): boolean {
  const a = numberIn(found);
  const b = typeof value === 'number' ? value : numberIn(value);
  if (a !== undefined && b !== undefined) return a === b;
  const norm = (s: string) =>
    s
      .toLowerCase()
      .normalize('NFKC')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  const f = norm(found);
  const v = norm(String(value));
  return v !== '' && (f === v || ` ${f} `.includes(` ${v} `));
}
