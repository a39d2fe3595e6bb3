// System One benchmark: POST /v1/systemone with three questions (a noul, a 5-option choice, a
// 4-level score) on a 300-character state, against one yes-no call on the same text, and with
// twelve questions (8 nouls, 3 choices, a score: a JevBench case's mix) on a 600-character state
// (issue 55's figure), interleaved in one run so all see the same machine, on the service as it
// ships (its readouts loaded). Prints a table and writes its run into
// bench/results/systemone.json.
//
//   node dist/bench/systemone.js [--runs 20]
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { post, recordRun, serveInProcess, update300 } from './harness.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);

// The service as `npm start` opens it: the default model with its shipped readouts.
const config = loadConfig(process.env, { port: 0, logLevel: 'silent' });
const server = await serveInProcess(config);
const { engine } = server.service;
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

/** Twelve questions as a JevBench case asks them: the three above, seven more nouls, two more choices. */
const TWELVE = {
  ...QUESTIONS,
  amounts: { type: 'noul', instructions: 'Are there open questions about amounts?' },
  summary: { type: 'noul', instructions: 'Will the client receive a summary?' },
  finance: { type: 'noul', instructions: 'Is finance asked to do something now?' },
  reviewed: { type: 'noul', instructions: 'Has the work been reviewed?' },
  complaint: { type: 'noul', instructions: 'Is the client complaining?' },
  dates: { type: 'noul', instructions: 'Is a date still unclear?' },
  second: { type: 'noul', instructions: 'Does the text cover more than one client?' },
  owner: {
    type: 'choice',
    instructions: 'Who should act next?',
    criteria: { team: 'the team that did the review', client: 'the client', finance: 'the finance department' },
  },
  tone: {
    type: 'choice',
    instructions: 'What is the tone?',
    criteria: { neutral: 'matter-of-fact', positive: 'pleased or thankful', negative: 'upset or critical' },
  },
};
/** A 600-character state: two updates. */
const update600 = (i: number) => `${update300(i)} ${update300(i + 500)}`.slice(0, 600);

const call = (path: string, body: unknown) => post(base + path, body);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const yesNo = (i: number) =>
  call('/v1/decision-machine-1/yes-no', { text: update300(i), statement: QUESTIONS.urgent.instructions });
const systemOne = (i: number) =>
  call('/v1/systemone', { model: 'jev-latest', state: update300(i), questions: QUESTIONS });
const systemOne12 = (i: number) =>
  call('/v1/systemone', { model: 'jev-latest', state: update600(i), questions: TWELVE });

// Warm-up: both slots hold the instructions; the choice question's prior is computed once.
for (const i of [998, 999]) {
  await yesNo(i);
  await systemOne(i);
  await systemOne12(i);
}

const one: { ms: number; tokens: number }[] = [];
const three: { ms: number; tokens: number }[] = [];
const twelve: { ms: number; tokens: number }[] = [];
for (let i = 0; i < runs; i++) {
  one.push(await yesNo(i));
  three.push(await systemOne(i));
  twelve.push(await systemOne12(i));
}
await server.close();

/** p50 and p95 of the latencies, and the median input tokens. */
const summary = (rs: { ms: number; tokens: number }[]) => {
  const ms = rs.map((r) => r.ms);
  return {
    p50Ms: pct(ms, 50),
    p95Ms: pct(ms, 95),
    inputTokens: pct(
      rs.map((r) => r.tokens),
      50,
    ),
  };
};
const report = {
  model: engine.info.description,
  slots: config.slots,
  threads: config.threads,
  runs,
  yesNo: summary(one),
  systemOne3: summary(three),
  systemOne12: summary(twelve),
  ratioP50: summary(three).p50Ms / summary(one).p50Ms,
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
row(
  '/v1/systemone, 8 nouls + 3 choices + a score, 600 chars: p50 / p95',
  `${report.systemOne12.p50Ms.toFixed(0)} / ${report.systemOne12.p95Ms.toFixed(0)} ms (${report.systemOne12.inputTokens} input tokens)`,
);
row('p50 ratio, 3 questions to one yes-no', `${report.ratioP50.toFixed(2)}x`);
recordRun('systemone', report);
