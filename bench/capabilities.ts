// Latency of every capability through HTTP on 300-character texts that differ from run to run
// (so only instructions are cached), classify with 2 vs 20 labels, a 20,000- vs a 1,000-character
// text, and a batch of texts against single calls. Prints a table, writes its run into
// bench/results/capabilities.json.
//
//   node dist/bench/capabilities.js [--runs 8]
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { percentile } from '../src/bench/stats.js';
import { post, recordRun, serveInProcess, ticket as text, TICKET_SCHEMA } from './harness.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '8' }, batch: { type: 'string', default: '8' } },
});
const runs = Number(values.runs);

const config = loadConfig(process.env, { port: 0, logLevel: 'silent' });
const server = await serveInProcess(config);
const { service } = server;
const base = `${server.url}/v1/decision-machine-1`;

const call = async (capability: string, body: unknown): Promise<number> =>
  (await post(`${base}/${capability}`, body)).ms;

const p50 = (xs: number[]) => percentile(xs, 50);
// Every call of the bench gets a text no earlier call had, so no row reads another row's text.
let nextText = 0;
async function measure(capability: string, body: (i: number) => unknown, n = runs, warm = 2): Promise<number> {
  for (let w = 0; w < warm; w++) await call(capability, body(nextText++)); // each slot learns the instructions
  const ms: number[] = [];
  for (let i = 0; i < n; i++) ms.push(await call(capability, body(nextText++)));
  return p50(ms);
}

const labels = (n: number) =>
  [
    'billing',
    'refund request',
    'technical problem',
    'account access',
    'sales inquiry',
    'complaint',
    'praise',
    'shipping',
    'cancellation',
    'security',
    'privacy',
    'feature request',
    'bug report',
    'how-to question',
    'partnership',
    'press',
    'job application',
    'spam',
    'legal',
    'other',
  ].slice(0, n);
const scale = ['not urgent', 'low', 'medium', 'high', 'critical'];
const TICKET = {
  ...TICKET_SCHEMA,
  properties: { ...TICKET_SCHEMA.properties, channel: { type: 'string', enum: ['email', 'phone', 'chat'] } },
};
const table: Record<string, number> = {};
table['yes-no (1 statement)'] = await measure('yes-no', (i) => ({
  text: text(i),
  statement: 'The customer wants money back.',
}));
table['classify (5 labels)'] = await measure('classify', (i) => ({ text: text(i), labels: labels(5) }));
table['classify (2 labels)'] = await measure('classify', (i) => ({ text: text(i), labels: labels(2) }));
table['classify (20 labels)'] = await measure('classify', (i) => ({ text: text(i), labels: labels(20) }));
table['rate (5 levels)'] = await measure('rate', (i) => ({ text: text(i), scale }));
table['answer (1 question)'] = await measure('answer', (i) => ({
  text: text(i),
  question: 'Where is the customer from?',
}));
table['entities (3 types)'] = await measure('entities', (i) => ({
  text: text(i),
  types: ['person', 'city', 'amount of money'],
}));
table['verify'] = await measure('verify', (i) => ({
  text: text(i),
  field: { name: 'invoice amount' },
  value: 100 + i * 7,
}));
table['extract (5 fields)'] = await measure('extract', (i) => ({ text: text(i), schema: TICKET }));
table['answer, 1,000 characters'] = await measure(
  'answer',
  (i) => ({ text: text(i, 1000), question: 'Where is the customer from?' }),
  1,
  0,
);
table['answer, 20,000 characters'] = await measure(
  'answer',
  (i) => ({ text: text(i, 20000), question: 'Where is the customer from?' }),
  1,
  0,
);

// Throughput: a batch of texts in one call against the same texts one call at a time.
const batch = Number(values.batch);
const fresh = () => Array.from({ length: batch }, () => text(nextText++));
let started = performance.now();
for (const t of fresh()) await call('classify', { text: t, labels: labels(5) });
const singleMs = (performance.now() - started) / batch;
started = performance.now();
await call('classify', { texts: fresh(), labels: labels(5) });
const batchMs = (performance.now() - started) / batch;

await server.close();

const report = {
  model: service.engine.info.description,
  runs,
  p50Ms: table,
  ratios: {
    classify20To2: table['classify (20 labels)']! / table['classify (2 labels)']!,
    answer20kTo1k: table['answer, 20,000 characters']! / table['answer, 1,000 characters']!,
    batchThroughputGain: singleMs / batchMs,
  },
  batch: { texts: batch, singleMsPerText: singleMs, batchMsPerText: batchMs },
};
console.log(`| capability (${report.model}, 300 characters unless noted) | p50 ms |\n|---|---|`);
for (const [k, v] of Object.entries(table)) console.log(`| ${k} | ${v.toFixed(0)} |`);
console.log(`| classify 20 labels / 2 labels | ${report.ratios.classify20To2.toFixed(2)}x |`);
console.log(`| answer 20,000 / 1,000 characters | ${report.ratios.answer20kTo1k.toFixed(2)}x |`);
console.log(
  `| classify, ${batch} texts in one call vs one by one: throughput | ${report.ratios.batchThroughputGain.toFixed(2)}x |`,
);
recordRun('capabilities', report);
