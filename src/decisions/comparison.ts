// A yes/no question that compares one quantity with a number ("Is the order worth more than $500?",
// "Was it delivered within the last 30 days?", "Is the bill 3 or more months overdue?"). The model
// reads which number of the text the question is about; the comparison itself is computed, since a
// small model compares numbers little better than chance (docs/capabilities.md, "Comparisons").
// Only a question with one comparison and no negation or conjunction is read this way: anything
// else stays the model's reading alone.
import type { ScoreJob, ScoreResult } from '../binding.js';
import { numberIn } from './numbers.js';
import { concat, type Prompt } from './prompt.js';

export type Operator = '>' | '>=' | '<' | '<=';

/** A comparison a question asks: the quantity `op` `threshold`, in `unit` when the question names a time unit. */
export interface Comparison {
  op: Operator;
  threshold: number;
  unit?: TimeUnit;
}

/**
 * A number the text states: as written less any currency or percent sign, the ways a reply may
 * write it (that, and as the text wrote it: "2821", "$2821"), its value and time unit.
 */
export interface Quantity {
  written: string;
  forms: string[];
  value: number;
  unit?: TimeUnit;
}

type TimeUnit = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';
const DAYS: Record<TimeUnit, number> = {
  minute: 1 / 1440,
  hour: 1 / 24,
  day: 1,
  week: 7,
  month: 365.25 / 12,
  year: 365.25,
};

const WORD_NUMBER =
  'zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|' +
  'seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred';
// A number as questions and texts write it: "$1,000", "30%", "2.5", "500,000", "3 million", "ten".
const NUMBER = String.raw`\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*(?:thousand|million|billion)\b)?%?|\b(?:${WORD_NUMBER})\b`;
const UNIT = String.raw`\s*(minutes?|hours?|days?|weeks?|months?|years?)?`;

// Counts written as ordinals ("my first return", "the third time"); not "second", which is as
// often a unit of time.
const ORDINALS = new Map(
  Object.entries({ first: 1, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10 }),
);
const ORDINAL = [...ORDINALS.keys()].join('|');

// A number a text states: not a piece of a date, a time, a phone number or an identifier
// ("2026-03-01", "09:03", "459-2331"); or an ordinal (its count, no unit).
const STATED = new RegExp(String.raw`(?<![\w/:.-])(${NUMBER})(?![\w/:-]|\.\d)${UNIT}|\b(${ORDINAL})\b`, 'gi');

// [pattern, operator]: the number is the pattern's first group, its unit the second (or third).
const PATTERNS: [RegExp, Operator][] = [
  [new RegExp(String.raw`(?<!\bno )\b(?:more|greater|longer|older|later) than (${NUMBER})${UNIT}`, 'g'), '>'],
  [new RegExp(String.raw`\b(?:over|above|exceeds?|exceeding) (${NUMBER})${UNIT}`, 'g'), '>'],
  [new RegExp(String.raw`(?<!\bno )\b(?:less|fewer|shorter|younger|sooner) than (${NUMBER})${UNIT}`, 'g'), '<'],
  [new RegExp(String.raw`\b(?:under|below) (${NUMBER})${UNIT}`, 'g'), '<'],
  [new RegExp(String.raw`\b(?:at least|no less than|no fewer than) (${NUMBER})${UNIT}`, 'g'), '>='],
  [new RegExp(String.raw`\b(?:at most|no more than|within(?: the (?:last|next|past))?) (${NUMBER})${UNIT}`, 'g'), '<='],
  [
    new RegExp(
      String.raw`(${NUMBER})${UNIT}(?: [a-z]+){0,2} or (?:more|older|longer|higher|greater|above)\b${UNIT}`,
      'g',
    ),
    '>=',
  ],
  [
    new RegExp(
      String.raw`(${NUMBER})${UNIT}(?: [a-z]+){0,2} or (?:less|fewer|under|below|sooner|earlier)\b${UNIT}`,
      'g',
    ),
    '<=',
  ],
];
// "more than once / twice": the count of times.
const TIMES: [RegExp, Operator, number][] = [
  [/\bmore than once\b/g, '>', 1],
  [/\bmore than twice\b/g, '>', 2],
  [/\bat least once\b/g, '>=', 1],
  [/\bat least twice\b/g, '>=', 2],
];
const NEGATION = /\b(?:not|never|none|nor|neither|without)\b|n't\b|\bno\b(?! (?:more|less|fewer) than)/;
// "or" other than in "N or more / or less", and "and" other than inside a number ("two hundred and ten").
const CONJUNCTION =
  /\band\b|\bor\b(?! (?:more|older|longer|higher|greater|above|less|fewer|under|below|sooner|earlier)\b)/;

/** The comparison `question` asks, when it asks exactly one and nothing else; undefined otherwise. */
export function comparisonIn(question: string): Comparison | undefined {
  const q = question.toLowerCase();
  if (NEGATION.test(q) || CONJUNCTION.test(q)) return undefined;
  const found: Comparison[] = [];
  for (const [pattern, op] of PATTERNS) {
    for (const m of q.matchAll(pattern)) {
      const threshold = valueOf(m[1]!);
      if (threshold !== undefined) found.push({ op, threshold, ...unitOf(m[2] ?? m[3]) });
    }
  }
  for (const [pattern, op, threshold] of TIMES) for (const _ of q.matchAll(pattern)) found.push({ op, threshold });
  return found.length === 1 ? found[0] : undefined;
}

/**
 * Every number `text` states, once per way it is written, in the order it first appears. A number
 * in words ("Two users", "the third time") is offered in digits as well, since a reply asked for a
 * number tends to write digits. A form belongs to the first number that has it.
 */
export function quantitiesIn(text: string): Quantity[] {
  const seen = new Map<string, Quantity>();
  const taken = new Set<string>();
  const add = (q: Quantity, forms: string[]) => {
    for (const f of forms) {
      if (taken.has(f)) continue;
      taken.add(f);
      q.forms.push(f);
    }
  };
  for (const m of text.matchAll(STATED)) {
    const asWritten = (m[1] ?? m[3]!).trim();
    const written = asWritten.replace(/[$%]/g, '');
    const known = seen.get(written);
    if (known) {
      add(known, [asWritten]);
      continue;
    }
    const value = m[3] ? ORDINALS.get(written.toLowerCase()) : valueOf(written);
    if (value === undefined) continue;
    const q: Quantity = { written, forms: [], value, ...unitOf(m[2]) };
    add(q, [written, asWritten, ...(/\d/.test(written) ? [] : [String(value)])]);
    if (q.forms.length > 0) seen.set(written, q);
  }
  return [...seen.values()];
}

/** Whether `q` satisfies `c`, converting between time units when both name one. */
export function holds(c: Comparison, q: Pick<Quantity, 'value' | 'unit'>): boolean {
  const value = c.unit && q.unit && c.unit !== q.unit ? (q.value * DAYS[q.unit]) / DAYS[c.unit] : q.value;
  switch (c.op) {
    case '>':
      return value > c.threshold;
    case '>=':
      return value >= c.threshold;
    case '<':
      return value < c.threshold;
    case '<=':
      return value <= c.threshold;
  }
}

/** The value of a number as written, its currency or percent sign aside. */
function valueOf(written: string): number | undefined {
  return numberIn(written.replace(/[$%]/g, ''));
}

function unitOf(word: string | undefined): { unit?: TimeUnit } {
  if (!word) return {};
  return { unit: word.toLowerCase().replace(/s$/, '') as TimeUnit };
}

/** What the model is asked after the shared reading of a text, for a comparing question; how its reply begins. */
const ASK_QUANTITY = (question: string) =>
  `Before answering "${question}", write the number from the text that the question is about, or none if ` +
  'the text gives no such number.';
const REPLY = 'The number from the text:';
const NONE = ' none';

/** The comparing questions of one text, asked in one job after the text's shared reading. */
export interface QuantityJob {
  job: ScoreJob;
  asked: { question: string; comparison: Comparison }[];
  quantities: Quantity[];
  /** The quantity each option but the last (none) writes. */
  of: number[];
  /** Per option, the options that continue its tokens with no other option between (see probabilities). */
  longer: number[][];
}

/** Reads comparing questions: which number each is about, then the comparison computed. */
export class Comparisons {
  constructor(private readonly prompt: Prompt) {}

  /**
   * The job asking, after `prefix` (the shared reading of `text`, the part the model reads), which
   * number each comparing question among `questions` is about; undefined when none compares or
   * the text states no number.
   */
  job(prefix: Int32Array, text: string, questions: string[]): QuantityJob | undefined {
    const asked = [...new Set(questions)].flatMap((question) => {
      const comparison = comparisonIn(question);
      return comparison ? [{ question, comparison }] : [];
    });
    if (asked.length === 0) return undefined;
    const quantities = quantitiesIn(text);
    if (quantities.length === 0) return undefined;
    const reply = this.prompt.option(REPLY);
    const branches = asked.map(({ question }) => concat(this.prompt.branch(ASK_QUANTITY(question)), reply));
    const forms = quantities.flatMap((q, k) => q.forms.map((f) => ({ reply: ` ${f}`, of: k })));
    const options = [...forms.map((f) => f.reply), NONE].map((o) => this.prompt.option(o));
    return {
      job: { prefix, branches, options },
      asked,
      quantities,
      of: forms.map((f) => f.of),
      longer: longer(options),
    };
  }

  /**
   * Each asked question's P(true): the probability of the numbers that satisfy its comparison, and
   * the probability that the text gives none times `direct` (the question read as yes-no reads it).
   * A number's score is that of its tokens, which "27" shares with "2": each option keeps what is
   * left after the options that continue it ("2" what "26" and "27" do not take).
   */
  probabilities(planned: QuantityJob, result: ScoreResult, direct: (question: string) => number): Map<string, number> {
    const { quantities, of, longer } = planned;
    const n = of.length + 1;
    return new Map(
      planned.asked.map(({ question, comparison }, b) => {
        const row = Array.from(result.logprobs.subarray(b * n, (b + 1) * n), Math.exp);
        const p = row.map((x, k) => Math.max(0, x - longer[k]!.reduce((a, j) => a + row[j]!, 0)));
        const total = p.reduce((a, x) => a + x, 0);
        if (total === 0) return [question, direct(question)];
        const held = of.reduce((a, q, k) => a + (holds(comparison, quantities[q]!) ? p[k]! : 0), 0);
        return [question, (held + p[n - 1]! * direct(question)) / total];
      }),
    );
  }
}

/** For each option, the options that continue its tokens with no other option between them. */
function longer(options: Int32Array[]): number[][] {
  const extends_ = (a: Int32Array, b: Int32Array) => a.length > b.length && b.every((t, i) => a[i] === t);
  return options.map((o) => {
    const above = options.flatMap((x, j) => (extends_(x, o) ? [j] : []));
    return above.filter((j) => !above.some((k) => k !== j && extends_(options[j]!, options[k]!)));
  });
}
