// What a second, different decision about the same text costs next to the first: classify a fresh
// 300-character text, then a yes-no on that same text; and the pipeline classify -> yes-no ->
// answer -> extract on one fresh text against one classify. A yes-no on a fresh text is measured
// alongside, so the gain of having read the text once shows. Every run uses new texts (only the
// instructions can be cached). Each call is timed on the wall clock and in CPU time of this process
// (the slots' threads included), which shared-CPU load barely moves. Prints a table and writes its
// run into bench/results/second-decision.json.
//
//   node dist/bench/second-decision.js [--runs 10] [--port 18610]
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { percentile } from '../src/bench/stats.js';
import { post, recordRun, serveInProcess, ticket, TICKET_SCHEMA } from './harness.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, port: { type: 'string', default: '18610' } },
});
const runs = Number(values.runs);

const config = loadConfig(process.env, { port: Number(values.port), logLevel: 'silent' });
const server = await serveInProcess(config);
const { service } = server;
const base = `${server.url}/v1/decision-machine-1`;
const text = (i: number) => ticket(i);

const LABELS = ['billing', 'refund request', 'technical problem', 'account access', 'complaint'];
const ask: Record<string, (t: string) => unknown> = {
  classify: (t) => ({ text: t, labels: LABELS }),
  'yes-no': (t) => ({ text: t, statement: 'The customer wants money back.' }),
  answer: (t) => ({ text: t, question: 'Where is the customer from?' }),
  extract: (t) => ({ text: t, schema: TICKET_SCHEMA }),
};

interface Cost {
  ms: number; // wall clock
  cpuMs: number; // user + system time of the whole process
}

async function call(capability: string, t: string): Promise<Cost> {
  const cpu = process.cpuUsage();
  const { ms } = await post(`${base}/${capability}`, ask[capability]!(t));
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

const sum = (a: Cost, b: Cost): Cost => ({ ms: a.ms + b.ms, cpuMs: a.cpuMs + b.cpuMs });
const p50 = (xs: Cost[]): Cost => {
  return {
    ms: percentile(
      xs.map((x) => x.ms),
      50,
    ),
    cpuMs: percentile(
      xs.map((x) => x.cpuMs),
      50,
    ),
  };
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
await server.close();

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
recordRun('second-decision', report);
