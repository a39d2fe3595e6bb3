// verify: what the text says for a field (the span kernel copies every value it gives), whether
// the given value agrees with it (numbers compared as numbers: "2,000 USD" matches 2000, "three"
// matches 3), and the model's probability that the text states this value for the field. With a
// head fitted for the field (src/heads), the head decides `matches` and `probability`; `found`
// is still the route's own reading.
import type { SpanResult } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { charsOf, type BilledBody } from './billing.js';
import { promptTokensOf } from './cost.js';
import { calibration, platt } from './distribution.js';
import { numberIn } from './numbers.js';
import { Prompt } from './prompt.js';
import { Source } from './source.js';
import { checkQuestion, fieldWords, focusQuery, VERIFY_SYSTEM } from './verify-question.js';
import { Reader } from './windows.js';
import { shaped, textsOf } from './texts.js';
import type { HeadDecider } from './head-decider.js';
import type { Static } from '@sinclair/typebox';
import type { VerifyRequest, VerifyResult as VerifyResultSchema } from '../api/verify.js';

export type VerifyInput = Static<typeof VerifyRequest>;
export type VerifyResult = Static<typeof VerifyResultSchema>;

export class Verify {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly separator: number;
  private readonly yesNo: Int32Array; // the first tokens of "Yes" and "No"
  private readonly reader: Reader;

  constructor(
    private readonly engine: Engine,
    private readonly heads?: HeadDecider,
  ) {
    this.prompt = new Prompt(engine, VERIFY_SYSTEM);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
    this.separator = this.prompt.option('\n')[0]!;
    this.yesNo = Int32Array.from(['Yes', 'No'], (o) => this.prompt.option(o)[0]!);
  }

  async run(input: VerifyInput, session: Session): Promise<BilledBody<VerifyResult | { results: VerifyResult[] }>> {
    const { texts, list } = textsOf(input);
    const field = fieldWords(input.field);
    const value = String(input.value);
    const excerpts = await Promise.all(texts.map((t) => this.reader.focus(session, t, [focusQuery(field, value)])));
    const sources = excerpts.map((e) => new Source(this.engine, e));
    // A head for the field reads the check question first, with hidden states, on the route's own
    // prompt (src/heads/reading.ts); the span job then finds on the prefix it has just read.
    // Given the excerpts (each short enough to be read whole), the head reads what the route reads
    // without ranking a long text's windows a second time.
    const byHead = await this.heads?.decide(
      { capability: 'verify', field: input.field },
      excerpts.map((e) => e.text),
      session,
      texts.map(() => value),
    );
    // One job per text: the find branch copies the field's values; without a head, the check
    // branch (asked on the same prefill) scores Yes against No at its first step.
    const check = byHead ? {} : { firstOptions: this.yesNo, scoredBranches: 1 };
    const how = {
      separator: this.separator,
      none: this.none,
      maxSpanTokens: 24,
      maxSpans: 4,
      minListLogprob: Math.log(0.5),
      ...check,
    };
    const branches = [
      this.prompt.branch(`Field: ${field}`),
      ...(byHead ? [] : [this.prompt.branch(checkQuestion(field, value))]),
    ];
    const found = await session.spans(
      sources.map((source) => source.job(this.prompt.prefix(`Text: ${source.text}\n\n`), branches, how)),
    );
    const results = sources.map((source, i): VerifyResult => {
      const r = found[i]!;
      const spans = r.spans[0]!;
      const given = spans.length > 0 && r.noneLogprobs[0]! <= spans[0]!.firstLogprob;
      const values = given ? spans.map((s) => source.span(s.start, s.end)?.text).filter((t): t is string => !!t) : [];
      const probability = byHead ? byHead.probabilities[i]![1]! : zeroShot(r, values, input.value);
      const matches = probability >= 0.5;
      return { matches, probability, found: [...new Set(values)] };
    });
    return {
      body: shaped(results, list),
      inputChars:
        charsOf(input.text, input.texts) +
        (charsOf(input.field.name, input.field.description) + value.length) * texts.length,
      inputTokens: promptTokensOf(found) + (byHead?.promptTokens ?? 0),
      ...(byHead ? { heads: [byHead.head] } : {}),
    };
  }
}

/**
 * The model's judgement (the check branch's Yes against No) and whether a value the text gives
 * agrees (+1), none does (-1) or the text gives none (0), mapped to one probability by the fitted map.
 */
function zeroShot(r: SpanResult, values: string[], value: string | number): number {
  const [yes, no] = r.firstLogprobs.subarray(2, 4); // the check branch: Yes, No
  const agreement = values.length === 0 ? 0 : values.some((v) => agrees(v, value)) ? 1 : -1;
  return platt(calibration.verify, yes! - no!, agreement);
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
