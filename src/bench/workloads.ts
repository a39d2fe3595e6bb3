// What a sweep sends: for each capability its route, the request built from a row's shape (texts
// per call, questions per call, labels) and how many decisions one request asks. A decision is one
// answer a caller reads: a statement about a text (yes-no), a label for a text (classify,
// classify-tree, rate, verify), a question about a text (answer), a field (extract), an entity
// type (entities), a System One question about a state, a tool call (chat).
import { CAPABILITY_PREFIX } from '../api/capability.js';
import { CAPABILITIES } from '../decisions/capabilities.js';

export const WORKLOADS = [...CAPABILITIES.map((c) => c.name), 'systemone', 'chat'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** The parts of a row's shape a workload reads; the others are not crossed for it. */
export interface Uses {
  batch: boolean;
  questions: boolean;
  labels: boolean;
}

/** What a capability not listed below reads: texts per call only (its example, one per text). */
const BATCH_ONLY: Uses = { batch: true, questions: false, labels: false };

export const usesOf = (workload: Workload): Uses => USES[workload] ?? BATCH_ONLY;

const USES: Partial<Record<Workload, Uses>> = {
  'yes-no': { batch: true, questions: true, labels: false },
  classify: { batch: true, questions: false, labels: true },
  'classify-tree': { batch: true, questions: false, labels: true },
  rate: { batch: true, questions: false, labels: true },
  answer: { batch: true, questions: true, labels: false },
  extract: { batch: true, questions: true, labels: false },
  entities: { batch: true, questions: true, labels: false },
  systemone: { batch: true, questions: true, labels: true },
  chat: { batch: false, questions: false, labels: true },
};

/** Questions per call when `--questions` is not given: the size a typical caller asks. */
export const DEFAULT_QUESTIONS: Partial<Record<Workload, number>> = {
  'yes-no': 1,
  answer: 1,
  extract: 5,
  entities: 3,
  systemone: 12,
};

/** A row's request shape; `questions` and `labels` are ignored where USES says so. */
export interface Shape {
  batch: number;
  questions: number;
  labels: number;
}

/** The route path of a workload (System One's batch route for several states). */
export function routeOf(workload: Workload, batch = 1): string {
  if (workload === 'chat') return '/v1/chat/completions';
  if (workload === 'systemone') return batch > 1 ? '/v1/systemone/batch' : '/v1/systemone';
  return `${CAPABILITY_PREFIX}/${workload}`;
}

const STATEMENTS = [
  'The customer wants money back.',
  'The message is a complaint.',
  'Someone promised to call back.',
  'The problem concerns a payment.',
  'The writer is satisfied.',
  'A deadline is mentioned.',
  'The customer has written before.',
  'The case is urgent.',
];
const QUESTIONS = [
  'Who wrote the message?',
  'Which city is mentioned?',
  'What is the amount?',
  'When did it happen?',
  'What does the customer want?',
  'How long has the customer been with us?',
];
const LABELS = [
  'billing',
  'refund request',
  'technical problem',
  'account access',
  'shipping',
  'complaint',
  'praise',
  'cancellation',
  'sales inquiry',
  'security',
  'privacy',
  'feature request',
  'bug report',
  'how-to question',
  'legal',
  'other',
];
const SCALE = [
  'none',
  'very low',
  'low',
  'rather low',
  'moderate',
  'rather high',
  'high',
  'very high',
  'severe',
  'critical',
];
const FIELDS: [string, object][] = [
  ['customer', { type: 'string' }],
  ['city', { type: 'string' }],
  ['amount', { type: 'number', description: 'the amount in EUR' }],
  ['refund_requested', { type: 'boolean' }],
  ['channel', { type: 'string', enum: ['email', 'phone', 'chat'] }],
  ['product', { type: 'string' }],
  ['days', { type: 'integer', description: 'a number of days' }],
  ['urgent', { type: 'boolean' }],
];
const TYPES = ['person', 'city', 'amount of money', 'product', 'date', 'organization'];

/** The `i`-th item of a pool, numbered past its end so that every item of a list differs. */
const nth = (pool: readonly string[], i: number) =>
  i < pool.length ? pool[i]! : `${pool[i % pool.length]} (${Math.floor(i / pool.length) + 1})`;
const list = (pool: readonly string[], n: number) => Array.from({ length: n }, (_, i) => nth(pool, i));
/** `n` levels of a low-to-high scale of 10, evenly spread. */
const scale = (n: number) => Array.from({ length: n }, (_, i) => SCALE[Math.round((i * 9) / (n - 1))]!);

const EXAMPLES: Partial<Record<Workload, object>> = Object.fromEntries(CAPABILITIES.map((c) => [c.name, c.example]));

/**
 * The request body of `workload` over `texts` (one text: the single form; several: the batch form).
 * A capability without a case below is asked its own example (src/api/<name>.ts) about each text.
 */
export function requestBody(workload: Workload, texts: readonly string[], shape: Shape): Record<string, unknown> {
  const q = shape.questions;
  const one = texts.length === 1 && workload !== 'systemone';
  const text = one ? { text: texts[0] } : { texts };
  switch (workload) {
    case 'yes-no':
      return { ...text, ...(q === 1 ? { statement: STATEMENTS[0] } : { statements: list(STATEMENTS, q) }) };
    case 'answer':
      return { ...text, ...(q === 1 ? { question: QUESTIONS[0] } : { questions: list(QUESTIONS, q) }) };
    case 'classify':
      return { ...text, labels: list(LABELS, shape.labels) };
    case 'classify-tree':
      return { ...text, tree: tree(shape.labels) };
    case 'rate':
      return { ...text, scale: scale(shape.labels) };
    case 'extract':
      return { ...text, schema: schema(q) };
    case 'entities':
      return { ...text, types: list(TYPES, q) };
    case 'systemone': {
      const questions = systemOneQuestions(q, shape.labels);
      return texts.length === 1
        ? { model: 'jev-latest', state: texts[0], questions }
        : { model: 'jev-latest', states: texts, questions };
    }
    case 'chat':
      return {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: texts[0] }],
        tools: list(LABELS, shape.labels).map((name, i) => ({
          type: 'function',
          function: {
            name: `handle_${name.replace(/\W+/g, '_')}`,
            description: `route a message about ${name}`,
            parameters: {
              type: 'object',
              properties: { [FIELDS[i % FIELDS.length]![0]]: FIELDS[i % FIELDS.length]![1] },
            },
          },
        })),
      };
    default: {
      const { text: _t, texts: _ts, ...question } = EXAMPLES[workload] as { text?: string; texts?: string[] };
      return { ...text, ...question };
    }
  }
}

/** `groups` top labels of two leaves each. */
function tree(groups: number): Record<string, unknown> {
  return Object.fromEntries(
    list(LABELS, groups).map((name) => [
      name,
      {
        description: `messages about ${name}`,
        labels: { [`${name}: new`]: 'a first message', [`${name}: follow-up`]: 'about an earlier one' },
      },
    ]),
  );
}

function schema(fields: number): Record<string, unknown> {
  const properties = Object.fromEntries(
    Array.from({ length: fields }, (_, i) => [
      nth(
        FIELDS.map(([name]) => name),
        i,
      ),
      FIELDS[i % FIELDS.length]![1],
    ]),
  );
  return { type: 'object', properties };
}

/** `n` questions, turn by turn a noul, a choice among `options` and a five-level score. */
function systemOneQuestions(n: number, options: number): Record<string, unknown> {
  return Object.fromEntries(
    Array.from({ length: n }, (_, i) => {
      const kind = i % 3;
      if (kind === 0) return [`q${i}`, { type: 'noul', instructions: nth(STATEMENTS, Math.floor(i / 3)) }];
      if (kind === 1)
        return [
          `q${i}`,
          {
            type: 'choice',
            instructions: 'Which team should handle this message?',
            criteria: Object.fromEntries(list(LABELS, options).map((l) => [l, null])),
          },
        ];
      return [`q${i}`, { type: 'score', instructions: 'How upset is the writer?', criteria: scale(5) }];
    }),
  );
}

/** How many decisions one request asks (see the file's head); counted from the body itself. */
export function decisionsOf(workload: Workload, body: Record<string, unknown>): number {
  const count = (v: unknown) => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0);
  const texts = Array.isArray(body.texts) ? body.texts.length : 1;
  switch (workload) {
    case 'yes-no': {
      // yes-no judges `text` and `texts` together, and statements without any text on their own.
      const judged = (body.text === undefined ? 0 : 1) + (Array.isArray(body.texts) ? body.texts.length : 0);
      return Math.max(1, judged) * (Array.isArray(body.statements) ? body.statements.length : 1);
    }
    case 'answer':
      return texts * (Array.isArray(body.questions) ? body.questions.length : 1);
    case 'extract':
      return texts * count((body.schema as { properties?: unknown } | undefined)?.properties);
    case 'entities':
      return texts * count(body.types);
    case 'systemone':
      return (Array.isArray(body.states) ? body.states.length : 1) * count(body.questions);
    case 'chat':
      return 1;
    default:
      return texts;
  }
}
