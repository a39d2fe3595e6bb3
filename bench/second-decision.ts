// What a second, different decision about the same text costs next to the first: classify a fresh
// 300-character text, then a yes-no on that same text; and the pipeline classify -> yes-no ->
// answer -> extract on one fresh text against one classify. A yes-no on a fresh text is measured
// alongside, so the gain of having read the text once shows. Every run uses new texts (only the
// instructions can be cached). Each call is timed on the wall clock and in CPU time of this process
// (the slots' threads included), which shared-CPU load barely moves. Prints a table and writes
// bench/results/second-decision.json.
//
//   node dist/bench/second-decision.js [--runs 10] [--port 18610]
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { routes } from '../src/http/routes.js';
import { serve } from '../src/http/uws.js';
import { createLogger } from '../src/log.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, port: { type: 'string', default: '18610' } },
});
const runs = Number(values.runs);

const config = loadConfig(process.env, { port: Number(values.port), logLevel: 'silent' });
const service = await openService(config);
const server = await serve(routes(service), { ...config, log: createLogger('silent') });
const base = `http://127.0.0.1:${server.port}/v1/decision-machine-1`;

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
function text(i: number): string {
  const s = `Ticket ${4000 + i}: ${NAMES[i % NAMES.length]} from ${CITIES[i % CITIES.length]} reports that the invoice of ${100 + i * 7} EUR was charged twice on day ${(i % 27) + 1}. She asks for a refund within ${5 + (i % 9)} days and says the support line never answered. The account was opened in ${2010 + (i % 12)}. `;
  return s.repeat(2).slice(0, 300);
}

const LABELS = ['billing', 'refund request', 'technical problem', 'account access', 'complaint'];
const TICKET = {
  type: 'object',
  properties: {
    customer: { type: 'string' },
    city: { type: 'string' },
    amount: { type: 'number', description: 'invoice amount in EUR' },
    refund_requested: { type: 'boolean' },
  },
};
const ask: Record<string, (t: string) => unknown> = {
  classify: (t) => ({ text: t, labels: LABELS }),
  'yes-no': (t) => ({ text: t, statement: 'The customer wants money back.' }),
  answer: (t) => ({ text: t, question: 'Where is the customer from?' }),
  extract: (t) => ({ text: t, schema: TICKET }),
};

interface Cost {
  ms: number; // wall clock
  cpuMs: number; // user + system time of the whole process
}

async function call(capability: string, t: string): Promise<Cost> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const res = await fetch(`${base}/${capability}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ask[capability]!(t)),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${capability}: status ${res.status}`);
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

const sum = (a: Cost, b: Cost): Cost => ({ ms: a.ms + b.ms, cpuMs: a.cpuMs + b.cpuMs });
const p50 = (xs: Cost[]): Cost => {
  const mid = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  return { ms: mid(xs.map((x) => x.ms)), cpuMs: mid(xs.map((x) => x.cpuMs)) };
};
const ratio = (a: Cost, b: Cost): Cost => ({ ms: a.ms / b.ms, cpuMs: a.cpuMs / b.cpuMs });

// instructions into both slots
for (const [w, cap] of Object.keys(ask).entries()) for (const k of [0, 1]) await call(cap, text(90_000 + w * 2 + k));

const first: Cost[] = [];
const second: Cost[] = [];
const freshYesNo: Cost[] = [];
const pipeline: Cost[] = [];
for (let i = 0; i < runs; i++) {
  const t = text(i);
  first.push(await call('classify', t));
  second.push(await call('yes-no', t));
  freshYesNo.push(await call('yes-no', text(1000 + i)));
  const other = text(2000 + i);
  let total: Cost = { ms: 0, cpuMs: 0 };
  for (const cap of ['classify', 'yes-no', 'answer', 'extract']) total = sum(total, await call(cap, other));
  pipeline.push(total);
}
server.close();
await service.engine.close();

const p = {
  classifyFresh: p50(first),
  yesNoAfterClassify: p50(second),
  yesNoFresh: p50(freshYesNo),
  pipeline4: p50(pipeline),
};
const report = {
  model: service.engine.info.description,
  runs,
  note: 'p50 of wall-clock and of process CPU time per call',
  p50: p,
  ratios: {
    secondToFirst: ratio(p.yesNoAfterClassify, p.classifyFresh),
    yesNoAfterClassifyToFresh: ratio(p.yesNoAfterClassify, p.yesNoFresh),
    pipelineToOneClassify: ratio(p.pipeline4, p.classifyFresh),
  },
  targets: { secondToFirst: 0.35, pipelineToOneClassify: 2.0 },
};
const ms = (c: Cost) => `${c.ms.toFixed(0)} ms | ${c.cpuMs.toFixed(0)} ms`;
const x = (c: Cost) => `${c.ms.toFixed(2)}x | ${c.cpuMs.toFixed(2)}x`;
console.log(`| same 300-character text (${report.model}, ${runs} runs) | p50 wall | p50 CPU |\n|---|---|---|`);
console.log(`| classify, fresh text (the first decision) | ${ms(p.classifyFresh)} |`);
console.log(`| yes-no right after, same text (the second) | ${ms(p.yesNoAfterClassify)} |`);
console.log(`| yes-no, fresh text | ${ms(p.yesNoFresh)} |`);
console.log(`| classify -> yes-no -> answer -> extract, one text | ${ms(p.pipeline4)} |`);
console.log(`| second / first (target <= 0.35) | ${x(report.ratios.secondToFirst)} |`);
console.log(`| yes-no after classify / yes-no fresh | ${x(report.ratios.yesNoAfterClassifyToFresh)} |`);
console.log(`| pipeline / one classify (target <= 2.0) | ${x(report.ratios.pipelineToOneClassify)} |`);
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/second-decision.json`, `${JSON.stringify(report, null, 2)}\n`);
