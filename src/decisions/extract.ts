// extract: fill a JSON Schema from a text, field by field, all fields after one shared prefill
// of the text: strings and arrays of strings are copied spans (span kernel), numbers are copied
// spans read as numbers, booleans and enums are options scored by log-probability. The result is
// typed by construction: every declared property is present, null when the text does not give it.
import type { Engine, Session } from '../engine/engine.js';
import type { SpanJob, SpanResult, ScoreJob, ScoreResult } from '../binding.js';
import { charsOf, type BilledBody } from './billing.js';
import { promptTokensOf } from './cost.js';
import { argmax, normalise } from './distribution.js';
import { Prompt } from './prompt.js';
import { fieldsOf, type Field } from './schema-fields.js';
import { Source } from './source.js';
import { listProbabilities } from './span-lists.js';
import { shaped, textsOf } from './texts.js';
import { Reader, type Excerpt } from './windows.js';
import { numberIn } from './numbers.js';
import { valueStarts } from './value-kinds.js';
import type { Static } from '@sinclair/typebox';
import type { ExtractRequest, ExtractResult as ExtractResultSchema } from '../api/extract.js';

export type ExtractInput = Static<typeof ExtractRequest>;
export type ExtractResult = Static<typeof ExtractResultSchema>;

/**
 * How the prompt names things (one system prompt for every kind of field, so all of a text's jobs share one cached
 * prefix) and what None means.
 */
export interface ExtractWording {
  system: string;
  text: string; // label before the text
  field: string; // label before a field's name
  requiredFilled: boolean; // a required field takes its best span even when "None" is likelier
}

const DOCUMENT_FIELDS: ExtractWording = {
  system:
    'You read fields from a text. For a field, copy its complete value from the text exactly as written, or ' +
    'reply None if the text does not give it; for a list, copy every value, one per line. For a yes/no ' +
    'question reply Yes or No. For a choice, reply with one of the options.',
  text: 'Text',
  field: 'Field',
  requiredFilled: false, // a document may lack a required field: it comes back null
};

// Said after a field of a kind of value (value-kinds.ts): a single value, a list.
const SHAPE_WORDS = {
  email: ['an e-mail address', 'e-mail addresses'],
  phone: ['a telephone number', 'telephone numbers'],
  url: ['a web address', 'web addresses'],
};

const MAX_LIST = 16;
// A single value may be long (a postal address over three lines of a receipt); a list item is short.
const MAX_VALUE_TOKENS = 64;
const MAX_ITEM_TOKENS = 32;
// A single value's rival first token at least a third as likely as the best is followed to the
// end of its span, which replaces the greedy one when likelier both whole and per token
// (SpanJob.forkWithin): a greedy first token copied "2018" for "14-01-2018", "TAX INVOICE" for a
// shop's name. Not for list items (a rival first token is another item), nor for answer (a
// question's rival reading is a different answer, not the same one written whole). Measured:
// docs/performance.md, "Where the decision code's constants come from".
const FORK_WITHIN = Math.log(3);

export class Extract {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly newline: number;
  private readonly comma: number;
  private readonly yesNo: Int32Array[];
  private readonly reader: Reader;

  constructor(
    private readonly engine: Engine,
    private readonly wording: ExtractWording = DOCUMENT_FIELDS,
  ) {
    this.prompt = new Prompt(engine, wording.system);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
    this.newline = this.prompt.option('\n')[0]!;
    this.comma = this.prompt.option(',')[0]!;
    this.yesNo = ['Yes', 'No'].map((o) => this.prompt.option(o));
  }

  async run(input: ExtractInput, session: Session): Promise<BilledBody<ExtractResult | { results: ExtractResult[] }>> {
    const { texts, list } = textsOf(input);
    const fields = fieldsOf(input.schema);
    const excerpts = await Promise.all(texts.map((text) => this.read(session, text, fields)));
    const filled = await Promise.all(excerpts.map((excerpt) => this.fill(session, excerpt, fields)));
    return {
      body: shaped(
        filled.map(({ data }) => ({ data })),
        list,
      ),
      inputChars: charsOf(input.text, input.texts) + JSON.stringify(input.schema).length * texts.length,
      inputTokens: filled.reduce((n, f) => n + f.tokens, 0),
    };
  }

  /** What the model reads of `text` to fill `fields` (see Reader). */
  read(session: Session, text: string, fields: Field[]): Promise<Excerpt> {
    return this.reader.focus(
      session,
      text,
      fields.map((f) => f.hint),
    );
  }

  /** Fills `fields` (from fieldsOf) from one excerpt in `session`; `tokens` is what the model read. */
  async fill(
    session: Session,
    excerpt: Excerpt,
    fields: Field[],
  ): Promise<{ data: Record<string, unknown>; tokens: number }> {
    const singles = fields.filter((f) => f.kind === 'string' || f.kind === 'number' || f.kind === 'integer');
    const lists = fields.filter((f) => f.kind === 'strings');
    const flags = fields.filter((f) => f.kind === 'boolean');
    // A choice whose options differ in their first token is read where the copied answers begin,
    // like a flag (a scored branch of the span job: no decode of its own); any other is a job of its own.
    const choices = fields
      .filter((f) => f.kind === 'enum')
      .map((f) => ({ f, options: this.prompt.choices(f.options!) }));
    const firstChoices = choices.filter((c) => c.options.every((o) => o.length === 1));
    const otherChoices = choices.filter((c) => !firstChoices.includes(c));
    const source = new Source(this.engine, excerpt);
    const prefix = this.prompt.prefix(`${this.wording.text}: ${excerpt.text}\n\n`);
    const choiceBranch = (f: Field) => this.prompt.branch(`Choose the ${f.hint}: ${f.options!.join(', ')}`);
    const copiedBranch = (f: Field) => {
      const shape = f.shape ? ` (${SHAPE_WORDS[f.shape][f.kind === 'strings' ? 1 : 0]})` : '';
      return this.prompt.branch(`${this.wording.field}: ${f.hint}${shape}`);
    };
    const scored = [
      ...flags.map((f) => this.prompt.branch(`Yes or no: ${f.hint}?`)),
      ...firstChoices.map((c) => choiceBranch(c.f)),
    ];
    const firstOptions = Int32Array.from(
      [...(flags.length ? this.yesNo : []), ...firstChoices.flatMap((c) => c.options)],
      (o) => o[0]!,
    );
    // One span job: single values, then lists, side by side in each decode, then the checks.
    const branches = [...singles.map(copiedBranch), ...lists.map(copiedBranch), ...scored];
    const branchStarts = shapedStarts(source, [...singles, ...lists], branches.length);
    const groups = [singles.length, lists.length, scored.length];
    const perBranch = (limits: number[]) =>
      Int32Array.from(groups.flatMap((n, g) => Array<number>(n).fill(limits[g]!)));
    const spanJob: SpanJob | undefined = branches.length
      ? source.job(prefix, branches, {
          separator: this.newline,
          none: this.none,
          maxSpans: MAX_LIST,
          maxSpanTokens: MAX_VALUE_TOKENS,
          branchMaxSpans: perBranch([1, MAX_LIST, 1]),
          branchMaxSpanTokens: perBranch([MAX_VALUE_TOKENS, MAX_ITEM_TOKENS, 1]),
          minListLogprob: Math.log(0.5),
          forkWithin: FORK_WITHIN, // single values only (SpanJob.forkWithin)
          inlineSeparator: this.comma, // lists only: a single value never separates
          ...(branchStarts ? { branchStarts } : {}),
          ...(scored.length ? { firstOptions, scoredBranches: scored.length } : {}),
        })
      : undefined;
    const scoreJobs: ScoreJob[] = otherChoices.map((c) => ({
      prefix,
      branches: [choiceBranch(c.f)],
      options: c.options,
    }));
    // One job after another: each finds the text in the slot the first one left it in (prefix
    // cache), where jobs side by side would each prefill it on a slot of their own.
    const spans: SpanResult[] = spanJob ? await session.spans([spanJob]) : [];
    const scores: ScoreResult[] = [];
    for (const job of scoreJobs) scores.push(...(await session.score([job])));

    const values = new Map<Field, unknown>();
    const copied = (r: SpanResult, b: number, field: Field, all: boolean): string[] => {
      const found = r.spans[b]!;
      const noneWins = r.noneLogprobs[b]! > (found[0]?.firstLogprob ?? -Infinity);
      if (found.length === 0 || (noneWins && !(field.required && this.wording.requiredFilled))) return [];
      const p = listProbabilities(found, r.noneLogprobs[b]!);
      const kept = all ? found.filter((_, k) => k === 0 || p[k]! >= 0.5) : found.slice(0, 1);
      return kept
        .map((s) => source.span(s.start, s.end)?.text)
        .filter((t): t is string => !!t)
        .map(oneLine);
    };
    const r = spans[0];
    if (r) {
      singles.forEach((f, b) => values.set(f, typed(f, copied(r, b, f, false)[0])));
      lists.forEach((f, k) => {
        const found = [...new Set(copied(r, singles.length + k, f, true).flatMap(items))];
        values.set(f, found.length ? found : null); // a list the text does not give is missing: null
      });
      // The scored branches' rows of firstLogprobs: each reads its own options' columns.
      const row = (k: number) => r.firstLogprobs.subarray((singles.length + lists.length + k) * firstOptions.length);
      flags.forEach((f, k) => values.set(f, row(k)[0]! >= row(k)[1]!));
      let column = flags.length ? 2 : 0;
      firstChoices.forEach(({ f, options }, k) => {
        const logprobs = row(flags.length + k).slice(column, column + options.length);
        values.set(f, f.options![argmax(normalise(logprobs))]);
        column += options.length;
      });
    }
    otherChoices.forEach(({ f }, j) => values.set(f, f.options![argmax(normalise(scores[j]!.logprobs))]));
    const data: Record<string, unknown> = Object.create(null);
    for (const f of fields) setPath(data, f.path, f.kind === 'objects' ? [] : (values.get(f) ?? null));
    return { data, tokens: promptTokensOf([...spans, ...scores]) };
  }
}

/**
 * Where each copied field's spans may begin (SpanJob.branchStarts): a field of a kind of value
 * (value-kinds.ts) only where the text holds such a value, any other anywhere; undefined when
 * no field is constrained. A text without a value of the field's kind leaves it unconstrained.
 */
function shapedStarts(source: Source, copied: Field[], branches: number): Int32Array | undefined {
  const n = source.tokens.length;
  const rows = copied.map((f) => (f.shape ? valueStarts(f.shape, source.text) : []));
  if (rows.every((at) => at.length === 0)) return undefined;
  const starts = new Int32Array(branches * n).fill(1);
  rows.forEach((at, b) => at.length > 0 && starts.set(source.tokensAt(at), b * n));
  return starts;
}

/** A value is not its layout: line breaks inside a copied value (an address over lines) become one space. */
const oneLine = (value: string) => value.replace(/[ \t]*\r?\n\s*/g, ' ');

/**
 * A list the text writes on one line ("Present: Priya Shah, Marco Conti, Lena Vogel") is copied as
 * one span: a list item is split at each ", " or "; ". On the development sets this fixed 4 list
 * fields and broke none (none of their 31 expected items holds a comma); an item that does (an
 * address) comes back in pieces, so such a field is better an array of objects.
 */
function items(span: string): string[] {
  return span.split(/\s*[,;]\s+/).filter((item) => item !== '');
}

/** A copied span as the field's type: numbers read as numbers (null when it holds no single number). */
function typed(field: Field, span: string | undefined): unknown {
  if (span === undefined) return null;
  if (field.kind === 'string') return span;
  const n = numberIn(span);
  if (n === undefined) return null;
  return field.kind === 'integer' ? (Number.isInteger(n) ? n : null) : n;
}

// Property names are the client's: objects without a prototype make `__proto__` or `constructor`
// plain keys, never a way onto Object.prototype.
function setPath(data: Record<string, unknown>, path: string[], value: unknown): void {
  let at = data;
  for (const p of path.slice(0, -1)) at = (at[p] ??= Object.create(null)) as Record<string, unknown>;
  at[path[path.length - 1]!] = value;
}
