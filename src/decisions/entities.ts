// entities: spans of the text for each requested type. One branch per type copies a list of
// spans ("a | b | c") with the span kernel; "None" competes with the first span.
import type { SpanResult } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { charsOf, type BilledBody } from './billing.js';
import { promptTokensOf } from './cost.js';
import { labelChars, labelsOf, type Label } from './labels.js';
import { Prompt } from './prompt.js';
import { Source } from './source.js';
import { listProbabilities } from './span-lists.js';
import { Reader } from './windows.js';
import { shaped, textsOf } from './texts.js';
import type { Static } from '@sinclair/typebox';
import type {
  EntitiesRequest,
  EntitiesResult as EntitiesResultSchema,
  Entity as EntitySchema,
} from '../api/entities.js';

export type EntitiesInput = Static<typeof EntitiesRequest>;
export type Entity = Static<typeof EntitySchema>;
export type EntitiesResult = Static<typeof EntitiesResultSchema>;

const SYSTEM =
  'You find things mentioned in a text. List every one of the requested kind by copying its exact words ' +
  'from the text, one per line. If the text mentions none, reply None.';

const MAX_PER_TYPE = 16;
// Digits are a token each: an IBAN or a phone number with spaces takes 25-30.
const MAX_SPAN_TOKENS = 32;
const MIN_PROBABILITY = 0.5;

export class Entities {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly separator: number;
  private readonly reader: Reader;

  constructor(private readonly engine: Engine) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
    this.separator = this.prompt.option('\n')[0]!;
  }

  async run(
    input: EntitiesInput,
    session: Session,
  ): Promise<BilledBody<EntitiesResult | { results: EntitiesResult[] }>> {
    const { texts, list } = textsOf(input);
    const types = labelsOf(input.types);
    const queries = types.map((t) => (t.description ? `${t.name}: ${t.description}` : t.name));
    const excerpts = await Promise.all(texts.map((t) => this.reader.focus(session, t, queries)));
    const sources = excerpts.map((e) => new Source(this.engine, e));
    // "Mentions of <kind>:" rather than "Kind: <kind>", after which the model wanted to write the kind's
    // own name first ("email" at p = 0.64 before a list of addresses, which then lost to "None").
    // Chosen among five wordings (docs/performance.md, "Where the decision code's constants come from").
    const kinds = types.map((t) =>
      this.prompt.branch(`Mentions of ${t.name}${t.description ? ` (${t.description})` : ''}:`),
    );
    const how = {
      separator: this.separator,
      none: this.none,
      maxSpanTokens: MAX_SPAN_TOKENS,
      maxSpans: MAX_PER_TYPE,
      minListLogprob: Math.log(MIN_PROBABILITY),
    };
    const jobs = sources.map((source) => source.job(this.prompt.prefix(`Text: ${source.text}\n\n`), kinds, how));
    const found = await session.spans(jobs);
    return {
      body: shaped(
        found.map((r, i) => ({ entities: entitiesOf(types, sources[i]!, r) })),
        list,
      ),
      inputChars: charsOf(input.text, input.texts) + labelChars(types) * texts.length,
      inputTokens: promptTokensOf(found),
    };
  }
}

function entitiesOf(types: Label[], source: Source, r: SpanResult): Entity[] {
  const out: Entity[] = [];
  const seen = new Set<string>();
  types.forEach((type, b) => {
    const spans = r.spans[b]!;
    const none = r.noneLogprobs[b]!;
    if (spans.length === 0 || none > spans[0]!.firstLogprob) return;
    const probabilities = listProbabilities(spans, none);
    spans.forEach((s, k) => {
      const span = source.span(s.start, s.end);
      if (!span || seen.has(`${type.name}\u0000${span.start}\u0000${span.end}`)) return;
      seen.add(`${type.name}\u0000${span.start}\u0000${span.end}`);
      const probability = probabilities[k]!;
      // A list runs on past what the model believes: keep what it finds more likely than not.
      if (probability < MIN_PROBABILITY) return;
      out.push({ type: type.name, text: span.text, probability, start: span.start, end: span.end });
    });
  });
  // A mention has one type: the same words found under several types keep the one the model is surest of.
  const surest = new Map<string, Entity>();
  for (const e of out) {
    const at = `${e.start}\u0000${e.end}`;
    if ((surest.get(at)?.probability ?? -1) < e.probability) surest.set(at, e);
  }
  return [...surest.values()].sort((a, b) => a.start - b.start || a.end - b.end);
}
