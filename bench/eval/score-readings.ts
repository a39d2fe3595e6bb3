// Which reading a score keeps: the development sets' rate items and JevBench's score questions
// (jevbench-240's base cases against its gold, as bench/eval/jevbench.ts scores them), each read
// on the default model as `--readings` asks: `shipped` (rate with its trained readout over the
// levels), `both-ways` (the same over the scale as listed and reversed, each level's two scores
// averaged: measured, not kept), `zero-shot` (rate's reading alone, the readout's input) and
// `zero-shot-both-ways` (the same both ways round), `as-choice` (the level words
// as classify's labels, the question after the text, classify's priors and re-reading),
// `as-statements` (each level a yes-no statement over the shared reading, "The answer to
// "<question>" is: <level>", the level with the highest P(true)) and `as-statements-scaled` (the
// same with the scale listed before each statement). Prints exact-level accuracy (and, for the
// development sets, within the item's tolerance) per source and reading; writes its run into
// bench/results/score-readings.json with every item's probabilities.
//
//   node dist/bench/eval/score-readings.js [--per-domain 10] [--readings shipped,zero-shot,...] [--gold FILE]
import { parseArgs } from 'node:util';
import type { ScoreJob } from '../../src/binding.js';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { calibration, normalise, temperature } from '../../src/decisions/distribution.js';
import { Classify } from '../../src/decisions/classify.js';
import { OptionReadout, optionsJob } from '../../src/decisions/option-readout.js';
import { Rate, RATE_READING_VERSION, RATE_READOUT_FILE } from '../../src/decisions/rate.js';
import { ASK_LEVEL, scaleListing } from '../../src/decisions/rate-job.js';
import { render } from '../../src/decisions/questions.js';
import type { Content } from '../../src/api/systemone.js';
import { Engine } from '../../src/engine/engine.js';
import { Reading } from '../../src/decisions/reading.js';
import { YesNo } from '../../src/decisions/yes-no.js';
import { claimLines } from '../../src/decisions/prompt.js';
import { modelSha256 } from '../../src/models/identity.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { decide, scoreRound } from '../../test/helpers/requests.js';
import { devRateItems, type DevRateItem } from './dev-cases.js';
import { goldQuestions } from './jevbench-cases.js';
import { recordRun } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-domain': { type: 'string', default: '10' },
    readings: {
      type: 'string',
      default: 'shipped,both-ways,zero-shot,zero-shot-both-ways,as-choice,as-statements,as-statements-scaled',
    },
    gold: { type: 'string' },
  },
});

/** A rate item, or a JevBench score question with its instructions as the question. */
interface Item extends DevRateItem {
  question?: string;
}

/** The score questions of the first `perDomain` cases of each domain that the gold gives a level. */
function jevbench(perDomain: number): Item[] {
  return goldQuestions('score', perDomain, values.gold).flatMap((q) =>
    typeof q.gold !== 'number'
      ? []
      : [{ ...q, source: 'jevbench', scale: (q.criteria as Content[]).map(render), gold: q.gold, tol: 0 }],
  );
}

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const modelPath = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
const engine = await Engine.open({ ...config, modelPath, encoderPath: undefined });
const readout = await OptionReadout.forModel(() => modelSha256(config), RATE_READOUT_FILE, RATE_READING_VERSION);
if (!readout) throw new Error('no rate readout for this model');
const rate = new Rate(engine);
const classify = new Classify(engine);
const score = (jobs: ScoreJob[]) => scoreRound(engine, jobs);

const items: Item[] = [...devRateItems(), ...jevbench(Number(values['per-domain']))];
const READINGS = values.readings.split(',');
const asksBothWays = READINGS.some((k) => ['both-ways', 'zero-shot-both-ways'].includes(k)); // reversed too
const asksRate = asksBothWays || READINGS.some((k) => ['shipped', 'zero-shot'].includes(k)); // rate's own jobs
const asksShared = READINGS.some((k) => k.startsWith('shared-')); // rate after the shared reading
type Picks = Record<string, number[]>;
const yesNo = new YesNo(engine);
const reading = new Reading(engine);
/** Each level as a yes-no statement over the shared reading; P(true) per level, with or without the scale listed. */
async function asStatements(item: Item): Promise<{ plain: number[]; scaled: number[] }> {
  const claim = (level: string) =>
    item.question ? `The answer to "${item.question}" is: ${level}` : `The text is best described as: ${level}`;
  const scale = `Scale, lowest to highest: ${item.scale.join(' / ')}\n`;
  const branches = [
    ...item.scale.map((l) => reading.prompt.branch(claimLines(claim(l)))),
    ...item.scale.map((l) => reading.prompt.branch(scale + claimLines(claim(l)))),
  ];
  const [r] = await score([{ prefix: reading.prefix(item.text), branches, options: yesNo.options }]);
  const n = yesNo.options.length;
  const p = branches.map((_, b) => yesNo.probability(r!.logprobs.subarray(b * n, (b + 1) * n)));
  return { plain: p.slice(0, item.scale.length), scaled: p.slice(item.scale.length) };
}
/** Rate's zero-shot reading and readout with the scale after the shared reading of the text. */
async function shared(item: Item): Promise<{ z: number[]; readout: number[] }> {
  const prompt = [
    ...reading.prefix(item.text),
    ...reading.branch(`${scaleListing(item.scale)}\n${ASK_LEVEL}`, item.question),
  ];
  const whole = Int32Array.from(prompt);
  const options = reading.prompt.choices(item.scale);
  const [first] = await score([{ prefix: whole.subarray(0, -1), branches: [whole.subarray(-1)], options }]);
  const t = temperature(calibration.rate, item.scale.length);
  const z = Array.from(first!.logprobs, (x) => x / t);
  const levels = item.scale.map((s) => reading.prompt.option(s));
  const [read] = await score([
    { ...optionsJob(whole, levels, reading.prompt.endOfTurn(), readout!.layer), hiddenLayers: [readout!.layer] },
  ]);
  return { z: normalise(z), readout: normalise(readout!.scores(z, read!)) };
}
const rows: { item: Item; p: Picks }[] = [];
let shippedMs = 0; // rate's jobs as listed, summed over the items (a cold prefill of each text)
let bothWaysMs = 0; // as listed and reversed, likewise (both readings a both-ways score needs)
let sharedMs = 0; // the shared reading's two jobs, likewise
const started = performance.now();
for (const [n, item] of items.entries()) {
  const p: Picks = {};
  if (asksRate) {
    const t0 = performance.now();
    const listed = await rate.levelReadings(score, [item.text], item.scale, [readout.layer], item.question);
    shippedMs += performance.now() - t0;
    const z = listed.z[0]!;
    const s = readout.scores(z, listed.read[0]!);
    p.shipped = normalise(s);
    p['zero-shot'] = normalise(z);
    if (asksBothWays) {
      // The scale reversed as well; each reversed level's score mapped back to its place.
      const back = await rate.levelReadings(
        score,
        [item.text],
        item.scale.toReversed(),
        [readout.layer],
        item.question,
      );
      bothWaysMs += performance.now() - t0;
      const zBack = back.z[0]!.toReversed();
      const sBack = readout.scores(back.z[0]!, back.read[0]!).toReversed();
      const mean = (xs: number[], ys: number[]) => xs.map((x, k) => (x + ys[k]!) / 2);
      p['both-ways'] = normalise(mean(s, sBack));
      p['zero-shot-both-ways'] = normalise(mean(z, zBack));
    }
  }
  if (READINGS.includes('as-choice')) {
    const labels = item.scale.map((name) => ({ name }));
    const asked = item.question ? { question: item.question } : {};
    const chosen = await decide(
      engine,
      { run: (_: null, s) => classify.classified(s, [item.text], labels, asked) },
      null,
    );
    p['as-choice'] = item.scale.map((s) => chosen.results[0]!.scores[s] ?? 0);
  }
  if (READINGS.some((k) => k.startsWith('as-statements'))) {
    const { plain, scaled } = await asStatements(item);
    p['as-statements'] = plain;
    p['as-statements-scaled'] = scaled;
  }
  if (asksShared) {
    const t0 = performance.now();
    const { z, readout } = await shared(item);
    sharedMs += performance.now() - t0;
    p['shared-zero-shot'] = z;
    p['shared-readout'] = readout;
  }
  rows.push({ item, p });
  if (n % 20 === 19)
    console.error(`${n + 1} of ${items.length} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
}
await engine.close();

const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));
const sources = [...new Set(items.map((i) => i.source))];
const table = sources.map((source) => {
  const mine = rows.filter((r) => r.item.source === source);
  const cell = (k: keyof Picks) => {
    const exact = mine.filter((r) => argmax(r.p[k]) === r.item.gold).length / mine.length;
    const within = mine.filter((r) => Math.abs(argmax(r.p[k]) - r.item.gold) <= r.item.tol).length / mine.length;
    return { exact, within };
  };
  return { source, items: mine.length, ...Object.fromEntries(READINGS.map((k) => [k, cell(k)])) };
});
console.log(`| source | items | ${READINGS.map((k) => `${k} exact / within tol`).join(' | ')} |`);
console.log(`|---|---|${READINGS.map(() => '---|').join('')}`);
for (const row of table) {
  const r = row as unknown as Record<string, { exact: number; within: number }>;
  console.log(
    `| ${row.source} | ${row.items} | ${READINGS.map((k) => `${(100 * r[k]!.exact).toFixed(1)} / ${(100 * r[k]!.within).toFixed(1)}`).join(' | ')} |`,
  );
}
// The mean time of rate's jobs per item, for the readings this run asked.
const timed: [string, boolean, number][] = [
  ['shipped', asksRate, shippedMs],
  ['both-ways', asksBothWays, bothWaysMs],
  ['shared', asksShared, sharedMs],
];
const meanMs = Object.fromEntries(timed.filter(([, asked]) => asked).map(([name, , ms]) => [name, ms / items.length]));
const times = Object.entries(meanMs).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`);
if (times.length > 0) console.log(`rate's jobs, mean per item: ${times.join(', ')}`);
recordRun('score-readings', {
  date: new Date().toISOString(),
  meanMs,
  perDomain: Number(values['per-domain']),
  table,
  items: rows.map((r) => ({ id: r.item.id, source: r.item.source, gold: r.item.gold, p: r.p })),
});
