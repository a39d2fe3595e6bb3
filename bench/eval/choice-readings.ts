// Which reading a choice keeps: the development sets' classify items and JevBench's choice questions
// (jevbench-240's base cases against its gold, as bench/eval/jevbench.ts scores them), each read
// on the default model in the ways named by --readings:
// - `shipped`: classify as System One asks it, the labels listed after the text with the question
//   in the set's own orders (label-jobs.ts), calibrated by their priors and averaged, so reordering
//   the options cannot move the answer (JevBench's option_permutation holds by construction);
// - `as-statements`: each option alone a yes-no statement over the shared reading, "The answer to
//   "<question>" is: <name>: <description>", the option with the highest P(true). It reads each
//   option without the others, so removing, adding or reordering options cannot move the rest
//   (JevBench's CHO and option_permutation hold by construction).
// This measures what each costs in decisions. Prints accuracy per source and reading, and the time
// each reading took (they take turns at reading an item first, which prefills its text for all);
// writes its run into bench/results/choice-readings.json with every item's probabilities.
//
//   node dist/bench/eval/choice-readings.js [--per-domain 10] [--limit 40] [--readings shipped] [--gold FILE]
import { parseArgs } from 'node:util';
import type { ScoreJob } from '../../src/binding.js';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { Classify } from '../../src/decisions/classify.js';
import { labelsOf, type Label } from '../../src/decisions/labels.js';
import { claimLines } from '../../src/decisions/prompt.js';
import { render } from '../../src/decisions/questions.js';
import { Reading } from '../../src/decisions/reading.js';
import { YesNo } from '../../src/decisions/yes-no.js';
import type { Content } from '../../src/api/systemone.js';
import { Engine, type Session } from '../../src/engine/engine.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { decide, scoreRound } from '../../test/helpers/requests.js';
import { devCases } from './dev-cases.js';
import { goldQuestions } from './jevbench-cases.js';
import { recordRun } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-domain': { type: 'string', default: '10' },
    limit: { type: 'string', default: '40' },
    gold: { type: 'string' },
    readings: { type: 'string', default: 'shipped,as-statements' },
  },
});

interface Item {
  id: string;
  source: string;
  text: string;
  labels: Label[];
  question?: string;
  gold: string;
}

/** The first `limit` classify items of each development set. */
function devItems(limit: number): Item[] {
  const seen = new Map<string, number>();
  return devCases<{ text: string; labels: string[] | Record<string, string> }, { label: string }>('classify')
    .filter((c) => {
      const n = seen.get(c.set) ?? 0;
      seen.set(c.set, n + 1);
      return n < limit;
    })
    .map((c) => ({
      id: c.id,
      source: `dev:${c.set}`,
      text: c.req.text,
      labels: labelsOf(c.req.labels),
      gold: c.expect.label,
    }));
}

/** The choice questions of the first `perDomain` cases of each domain that the gold gives an option. */
function jevbench(perDomain: number): Item[] {
  return goldQuestions('choice', perDomain, values.gold).flatMap((q) => {
    if (typeof q.gold !== 'string') return [];
    const criteria = q.criteria as Record<string, Content | null>;
    const described = Object.entries(criteria).map(([k, d]) => [k, d == null ? '' : render(d)]);
    return [{ ...q, source: 'jevbench', labels: labelsOf(Object.fromEntries(described)), gold: q.gold }];
  });
}

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const modelPath = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
const engine = await Engine.open({ ...config, modelPath, encoderPath: undefined });
const classify = new Classify(engine);
const yesNo = new YesNo(engine);
const reading = new Reading(engine);
const score = (jobs: ScoreJob[]) => scoreRound(engine, jobs);

/** Each option alone as a yes-no statement over the shared reading: its P(true). */
async function asStatements(item: Item): Promise<number[]> {
  const option = (l: Label) => (l.description ? `${l.name}: ${l.description}` : l.name);
  const claim = (l: Label) =>
    item.question ? `The answer to "${item.question}" is: ${option(l)}` : `The text is best described as: ${option(l)}`;
  const branches = item.labels.map((l) => reading.prompt.branch(claimLines(claim(l))));
  const [r] = await score([{ prefix: reading.prefix(item.text), branches, options: yesNo.options }]);
  const n = yesNo.options.length;
  return branches.map((_, b) => yesNo.probability(r!.logprobs.subarray(b * n, (b + 1) * n)));
}

const items = [...devItems(Number(values.limit)), ...jevbench(Number(values['per-domain']))];
const READINGS = values.readings.split(',');
const ms: Record<string, number> = Object.fromEntries(READINGS.map((k) => [k, 0]));
const rows: { item: Item; p: Record<string, number[]> }[] = [];
for (const [n, item] of items.entries()) {
  const asked = item.question ? { question: item.question } : {};
  const readings: Record<string, () => Promise<number[]>> = {
    shipped: async () => {
      const run = (_: null, s: Session) => classify.classified(s, [item.text], item.labels, asked);
      const chosen = await decide(engine, { run }, null);
      return item.labels.map((l) => chosen.results[0]!.scores[l.name] ?? 0);
    },
    'as-statements': () => asStatements(item),
  };
  // The first reading of an item prefills its text for both: they take turns at going first.
  const order = n % 2 === 0 ? READINGS : [...READINGS].reverse();
  const p: Record<string, number[]> = {};
  for (const k of order) {
    const t = performance.now();
    p[k] = await readings[k]!();
    ms[k]! += performance.now() - t;
  }
  rows.push({ item, p });
  if (n % 20 === 19) console.error(`${n + 1} of ${items.length}`);
}
await engine.close();

const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));
const right = (r: (typeof rows)[number], k: string) => r.item.labels[argmax(r.p[k]!)]!.name === r.item.gold;
const sources = [...new Set(items.map((i) => i.source))];
const table = sources.map((source) => {
  const mine = rows.filter((r) => r.item.source === source);
  return {
    source,
    items: mine.length,
    ...Object.fromEntries(READINGS.map((k) => [k, mine.filter((r) => right(r, k)).length / mine.length])),
  };
});
console.log(`| source | items | ${READINGS.join(' | ')} |`);
console.log(`|---|---|${READINGS.map(() => '---|').join('')}`);
for (const row of table) {
  const r = row as unknown as Record<string, number>;
  console.log(`| ${row.source} | ${row.items} | ${READINGS.map((k) => `${(100 * r[k]!).toFixed(1)}%`).join(' | ')} |`);
}
console.log(`| time per item | | ${READINGS.map((k) => `${(ms[k]! / items.length).toFixed(0)} ms`).join(' | ')} |`);
recordRun('choice-readings', {
  date: new Date().toISOString(),
  perDomain: Number(values['per-domain']),
  limit: Number(values.limit),
  table,
  msPerItem: Object.fromEntries(READINGS.map((k) => [k, ms[k]! / items.length])),
  items: rows.map((r) => ({
    id: r.item.id,
    source: r.item.source,
    gold: r.item.gold,
    labels: r.item.labels.map((l) => l.name),
    p: r.p,
  })),
});
