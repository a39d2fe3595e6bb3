// What the lab benches of bench/ share: the texts they time (each index a text no other index has,
// so only instructions are cached) and the one result file per bench, bench/results/NAME.json,
// whose runs are kept side by side by command line, each dated. The service in process, the
// percentiles and the seeded texts of the product's sweep are in src/bench/.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

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

/**
 * Writes `report` as the run of this command line in bench/results/NAME.json, beside the runs of
 * other command lines (a file from before runs were kept is kept whole as the run "earlier").
 */
export function recordRun(name: string, report: object): void {
  mkdirSync(RESULTS, { recursive: true });
  const file = `${RESULTS}${name}.json`;
  const old = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown }) : undefined;
  // A file of runs has an object `runs`; in a report from before, `runs` was a count.
  const kept = old?.runs !== null && typeof old?.runs === 'object' && !Array.isArray(old.runs);
  const runs = (kept ? old!.runs : old === undefined ? {} : { earlier: old }) as Record<string, unknown>;
  const args = process.argv.slice(2).join(' ');
  runs[args || 'defaults'] = {
    date: new Date().toISOString(),
    command: `node dist/bench/${name}.js ${args}`.trim(),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    ...report,
  };
  writeFileSync(file, `${JSON.stringify({ runs }, null, 2)}\n`);
}
