// What the benches of bench/ (speed and load), bench/eval/ (quality) and bench/train/ (fitting
// shipped artefacts) share: the service they measure (opened in this process and served on a
// loopback port, or any service they build served the same way), one timed HTTP call, the texts
// they send (each index a text no other index has, so only instructions are cached; the small
// real decisions of the load benches), and the one result file per bench,
// bench/results/NAME.json, whose runs are kept side by side by command line, each dated. The
// percentiles and the seeded texts of the product's sweep are in src/bench/.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export { serveInProcess, serveService, type InProcessService } from '../src/bench/target.js';

/** The checkout (dist/bench/harness.js is two folders below it). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = `${ROOT}bench/results/`;

// ---- the service measured: serveInProcess and serveService (src/bench/target.ts), above

/** One HTTP call's reply: status, milliseconds from sending to its last byte, x-input-tokens, the body. */
export interface Timed {
  status: number;
  ms: number;
  tokens: number;
  body: ArrayBuffer;
  /** The body as JSON. */
  json<T = any>(): T;
}

/** POSTs `body` as JSON (a string as it is) and reads the whole reply; fails unless 200 when `ok`. */
export async function post(
  url: string,
  body: unknown,
  { headers = {}, ok = true, signal }: { headers?: Record<string, string>; ok?: boolean; signal?: AbortSignal } = {},
): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  const bytes = await res.arrayBuffer();
  const ms = performance.now() - started;
  const json = () => JSON.parse(new TextDecoder().decode(bytes));
  if (ok && res.status !== 200)
    throw new Error(`${url}: status ${res.status} ${new TextDecoder().decode(bytes).slice(0, 200)}`);
  return { status: res.status, ms, tokens: Number(res.headers.get('x-input-tokens')), body: bytes, json };
}

// ---- the texts sent

const SUBJECTS = [
  'invoice',
  'shipment',
  'contract',
  'meeting',
  'refund',
  'ticket',
  'order',
  'report',
  'flight',
  'lease',
];

/** A 300-character status update; index `i` names client 1000 + i. */
export function update300(i: number): string {
  const s = SUBJECTS[i % SUBJECTS.length]!;
  const base = `Update ${i}: the ${s} for client ${1000 + i} was reviewed on day ${(i % 28) + 1}. The team confirmed the ${s} details, noted two open questions about dates and amounts, and agreed to send a summary to the client before Friday. No further action is needed from finance at this point. `;
  return base.slice(0, 300);
}

const NAMES = [
  'Maria Lopez',
  'Jon Berg',
  'Aiko Tanaka',
  'Omar Haddad',
  'Lena Fischer',
  'Raj Patel',
  'Eva Novak',
  'Tom Reed',
];
const CITIES = ['Lisbon', 'Oslo', 'Osaka', 'Cairo', 'Munich', 'Pune', 'Prague', 'Leeds'];

/** A support ticket of `length` characters: a customer from a city, an invoice of 100 + 7i EUR. */
export function ticket(i: number, length = 300): string {
  const s = `Ticket ${4000 + i}: ${NAMES[i % NAMES.length]} from ${CITIES[i % CITIES.length]} reports that the invoice of ${100 + i * 7} EUR was charged twice on day ${(i % 27) + 1}. She asks for a refund within ${5 + (i % 9)} days and says the support line never answered. The account was opened in ${2010 + (i % 12)}. `;
  return s.repeat(Math.ceil(length / s.length)).slice(0, length);
}

/** The fields a ticket's text holds, as an extract schema. */
export const TICKET_SCHEMA = {
  type: 'object',
  properties: {
    customer: { type: 'string' },
    city: { type: 'string' },
    amount: { type: 'number', description: 'invoice amount in EUR' },
    refund_requested: { type: 'boolean' },
  },
};

/** The small real decisions the load benchmarks send (retry-storm, soak, fairness): [capability, body]. */
export const SMALL_DECISIONS: readonly [string, unknown][] = [
  ['yes-no', { text: 'The parcel arrived on Tuesday, two days late.', statement: 'The parcel was late.' }],
  [
    'classify',
    { text: 'My card was charged twice for one order.', labels: ['billing', 'shipping', 'account', 'other'] },
  ],
  [
    'extract',
    {
      text: 'Sam Ortiz booked a table for 2 adults on Friday.',
      schema: { type: 'object', properties: { name: { type: 'string' }, adults: { type: 'integer' } } },
    },
  ],
];

// ---- the result file

/**
 * Writes `report` as the run of this command line in bench/results/NAME.json, beside the runs of
 * other command lines (a file from before runs were kept is kept whole as the run "earlier").
 * `env` names the environment variables that are part of the command line (settings the bench
 * reads from the environment, as `DM_KEY_MAX_INFLIGHT=1024 node dist/bench/fairness.js`).
 */
export function recordRun(name: string, report: object, { env = [] }: { env?: string[] } = {}): void {
  mkdirSync(RESULTS, { recursive: true });
  const file = `${RESULTS}${name}.json`;
  const old = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown }) : undefined;
  // A file of runs has an object `runs`; in a report from before, `runs` was a count.
  const kept = old?.runs !== null && typeof old?.runs === 'object' && !Array.isArray(old.runs);
  const runs = (kept ? old!.runs : old === undefined ? {} : { earlier: old }) as Record<string, unknown>;
  const settings = env.filter((k) => process.env[k] !== undefined).map((k) => `${k}=${process.env[k]}`);
  const args = process.argv.slice(2).join(' ');
  const script = relative(ROOT, process.argv[1] ?? `dist/bench/${name}.js`);
  runs[[...settings, args].join(' ').trim() || 'defaults'] = {
    date: new Date().toISOString(),
    command: [...settings, 'node', script, args].join(' ').trim(),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    ...report,
  };
  writeFileSync(file, `${JSON.stringify({ runs }, null, 2)}\n`);
}

/** The runs recordRun kept under `name`, as recorded (a report from before runs were kept: one run). */
export function recordedRuns(name: string): unknown[] {
  const file = `${RESULTS}${name}.json`;
  if (!existsSync(file)) return [];
  const old = JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown };
  const kept = old.runs !== null && typeof old.runs === 'object' && !Array.isArray(old.runs);
  return kept ? Object.values(old.runs as Record<string, unknown>) : [old];
}
