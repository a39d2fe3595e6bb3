// System One benchmark: POST /v1/systemone with three questions (a noul, a 5-option choice, a
// 4-level score) on a 300-character state, against one yes-no call on the same text, interleaved
// in one run so both see the same machine. Prints a table and writes its run into
// bench/results/systemone.json.
//
//   node dist/bench/systemone.js [--runs 20]
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { Engine } from '../src/engine/engine.js';
import { serviceOf } from '../src/service.js';
import { resolveModel } from '../src/models/store.js';
import { post, recordRun, serveService, update300 } from './harness.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);

const config = loadConfig(process.env, { port: 0, logLevel: 'silent' });
const [modelPath, encoderPath] = await Promise.all([
  resolveModel(config.model, { path: config.modelPath }),
  config.encoder === 'none' ? undefined : resolveModel(config.encoder),
]);
const engine = await Engine.open({ ...config, modelPath, encoderPath });
const server = await serveService(serviceOf(engine), config);
const base = server.url;

const QUESTIONS = {
  urgent: { type: 'noul', instructions: 'The client must act before Friday.' },
  topic: {
    type: 'choice',
    instructions: 'What is the update about?',
    criteria: {
      Billing: 'invoices and payments',
      Logistics: 'shipments and orders',
      Legal: 'contracts and leases',
      Travel: 'flights',
      Support: 'tickets and reports',
    },
  },
  progress: {
    type: 'score',
    instructions: 'How finished is the work?',
    criteria: ['Not started', 'Under way', 'Nearly done', 'Done'],
  },
};

const call = (path: string, body: unknown) => post(base + path, body);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const yesNo = (i: number) =>
  call('/v1/decision-machine-1/yes-no', { text: update300(i), statement: QUESTIONS.urgent.instructions });
const systemOne = (i: number) =>
  call('/v1/systemone', { model: 'jev-latest', state: update300(i), questions: QUESTIONS });

// Warm-up: both slots hold the instructions; the choice question's prior is computed once.
for (const i of [998, 999]) {
  await yesNo(i);
  await systemOne(i);
}

const one: { ms: number; tokens: number }[] = [];
const three: { ms: number; tokens: number }[] = [];
for (let i = 0; i < runs; i++) {
  one.push(await yesNo(i));
  three.push(await systemOne(i));
}
await server.close();

const report = {
  model: engine.info.description,
  slots: config.slots,
  threads: config.threads,
  runs,
  yesNo: {
    p50Ms: pct(
      one.map((r) => r.ms),
      50,
    ),
    p95Ms: pct(
      one.map((r) => r.ms),
      95,
    ),
    inputTokens: pct(
      one.map((r) => r.tokens),
      50,
    ),
  },
  systemOne3: {
    p50Ms: pct(
      three.map((r) => r.ms),
      50,
    ),
    p95Ms: pct(
      three.map((r) => r.ms),
      95,
    ),
    inputTokens: pct(
      three.map((r) => r.tokens),
      50,
    ),
  },
  ratioP50:
    pct(
      three.map((r) => r.ms),
      50,
    ) /
    pct(
      one.map((r) => r.ms),
      50,
    ),
};
const row = (k: string, v: string) => console.log(`| ${k} | ${v} |`);
console.log(
  `| System One benchmark (${report.model}, ${runs} runs, ${config.slots} slots x ${config.threads} threads) | |\n|---|---|`,
);
row(
  'yes-no, one statement, 300 chars: p50 / p95',
  `${report.yesNo.p50Ms.toFixed(0)} / ${report.yesNo.p95Ms.toFixed(0)} ms (${report.yesNo.inputTokens} input tokens)`,
);
row(
  '/v1/systemone, noul + 5-option choice + 4-level score: p50 / p95',
  `${report.systemOne3.p50Ms.toFixed(0)} / ${report.systemOne3.p95Ms.toFixed(0)} ms (${report.systemOne3.inputTokens} input tokens)`,
);
row('p50 ratio', `${report.ratioP50.toFixed(2)}x`);
recordRun('systemone', report);
