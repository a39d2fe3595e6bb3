// Refits a trained readout of rate over a scale's levels and reports it leaving each training
// source out. The levels are options: per level s = a z + b e + v . h, as the option readout
// (src/decisions/option-readout.ts; fitted by src/heads/readout-fit.ts with its step
// decaying), with z the level's zero-shot reading as rate ships it
// (log-probability over the calibrated temperature), e the log-probability that the reply ends
// after the level written out, h a layer's hidden state at the level's last token. Training items
// come only from vaderSentiment 3.3.2's human ratings (test/helpers/training-data.ts; the items are
// drawn by test/helpers/rate-items.ts, which the test that refits a few of them shares), one source per kind
// of text: each text's mean rating (-4..4) is put on
// one of a few general sentiment scales (SCALES), items near a cut between two levels left out and
// levels drawn evenly, so the fit learns "which level fits", not a base rate. What the model reads
// (Rate.levelReadings: layers 16 and final together) is kept in a feature cache and a run resumes
// where it stopped. For each layer (or none: a and b only) and penalty, a readout fitted without a
// source is scored on it beside rate as shipped; --report also reads the development sets' rate
// items (../shared/eval), never fitted on. The readout is written (--out) only when, at the best
// layer and penalty, it beats rate as shipped on every source left out and loses on no development
// set (--report required). Writes its run (by command line) into bench/results/rate-readout.json.
//
//   node dist/bench/train/rate-readout.js [--per-source 120] [--penalties 0.3,1,10] [--seed 1] [--report]
//       [--eval ../shared/eval (the development sets' folder; from a worktree, /work/shared/eval)]
//       [--out src/decisions/readouts/rate.json]
import { devRateItems, SHARED_EVAL } from '../eval/dev-cases.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { FeatureCache } from './feature-cache.js';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { ScoreJob } from '../../src/binding.js';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { normalise } from '../../src/decisions/distribution.js';
import { Rate, RATE_READING_VERSION } from '../../src/decisions/rate.js';
import { Engine } from '../../src/engine/engine.js';
import { modelSha256 } from '../../src/models/identity.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { fnv1a } from '../../src/decisions/hash.js';
import { ece } from '../eval/metrics.js';
import { DECAYING, fitReadout, type FittedReadout, type Item } from '../../src/heads/readout-fit.js';
import { vader } from '../../test/helpers/training-data.js';
import { scoreRound } from '../../test/helpers/requests.js';
import { LAYERS, MARGIN, SCALES, SMALL_REFIT, sample } from '../../test/helpers/rate-items.js';
import { recordRun, ROOT as root } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-source': { type: 'string', default: '120' },
    penalties: { type: 'string', default: '0.3,1,10' },
    seed: { type: 'string', default: '1' },
    report: { type: 'boolean', default: false },
    eval: { type: 'string', default: SHARED_EVAL },
    out: { type: 'string', default: `${root}src/decisions/readouts/rate.json` },
  },
});
const perSource = Number(values['per-source']);
const penalties = values.penalties.split(',').map(Number);
const seed = Number(values.seed);

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const modelPath = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
const model = await modelSha256(config);
const sets = await vader();
const asked = [
  ...sets.flatMap((s, k) => sample(s, k, perSource, seed)),
  ...(values.report ? devRateItems(values.eval) : []),
];
const tolerance = new Map(asked.map((a) => [a.id, a.tol]));

// What was read of each item: Item's fields, its hidden state holding LAYERS.length rows of dim per level.
type Read = Item;
const cache = new FeatureCache<Read>(
  `rate-${model.slice(0, 12)}-L${LAYERS.join('_')}-r${RATE_READING_VERSION}`,
  (m) => m.z.length * LAYERS.length * m.dim,
);
const reads = cache.items;

const todo = asked.filter((a) => !reads.has(a.id));
if (todo.length > 0) {
  const engine = await Engine.open({ ...config, modelPath, encoderPath: undefined });
  const rate = new Rate(engine);
  const score = (jobs: ScoreJob[]) => scoreRound(engine, jobs);
  const started = performance.now();
  for (const [n, a] of todo.entries()) {
    const { z, read } = await rate.levelReadings(score, [a.text], a.scale, LAYERS);
    const r = read[0]!;
    const item: Read = {
      id: a.id,
      source: a.source,
      gold: a.gold,
      z: z[0]!,
      end: Array.from(r.logprobs),
      dim: engine.hiddenSize,
      hidden: r.hidden!,
    };
    cache.add(item);
    if (n % 20 === 0)
      console.error(`read ${n + 1} of ${todo.length} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await engine.close();
}

/** A read as the fit's item for one layer (LAYERS' index), or with no hidden state (undefined). */
function itemOf(r: Read, layer: number | undefined): Item {
  if (layer === undefined) return { ...r, dim: 0, hidden: new Float32Array(0) };
  const l = LAYERS.indexOf(layer);
  const rows = r.z.length;
  const hidden = new Float32Array(rows * r.dim);
  for (let o = 0; o < rows; o++)
    hidden.set(r.hidden.subarray((o * LAYERS.length + l) * r.dim, (o * LAYERS.length + l + 1) * r.dim), o * r.dim);
  return { ...r, hidden };
}

const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));
/** Exact level, within the gold's tolerance (what bench/eval counts), and top-level ECE, of probabilities. */
function scored(items: Item[], p: (x: Item) => number[]) {
  const picks = items.map((x) => ({ x, p: p(x) }));
  return {
    exact: picks.filter(({ x, p }) => argmax(p) === x.gold).length / items.length,
    withinTol:
      picks.filter(({ x, p }) => Math.abs(argmax(p) - x.gold) <= (tolerance.get(x.id) ?? 0)).length / items.length,
    ece: ece(picks.map(({ x, p }) => ({ p: Math.max(...p), y: argmax(p) === x.gold ? 1 : 0 }))),
  };
}
/** A fitted readout's figures on one source's items, beside rate as shipped (softmax of z). */
function figures(fitted: FittedReadout, source: string, test: Item[]) {
  return {
    source,
    items: test.length,
    head: scored(test, (x) => fitted.probabilities(x)),
    shipped: scored(test, (x) => normalise(x.z)),
  };
}

const all = asked.map((a) => reads.get(a.id)!);
const sources = sets.map((s) => s.name);
const variants = [...LAYERS, undefined].flatMap((layer) => penalties.map((penalty) => ({ layer, penalty })));
const byVariant = variants.map(({ layer, penalty }) => {
  const training = all.filter((x) => sources.includes(x.source)).map((x) => itemOf(x, layer));
  const held = sources.map((source) =>
    figures(
      fitReadout(
        training.filter((x) => x.source !== source),
        penalty,
        DECAYING,
      ),
      source,
      training.filter((x) => x.source === source),
    ),
  );
  const meanGain = held.reduce((s, h) => s + h.head.exact - h.shipped.exact, 0) / held.length;
  return { layer: layer ?? 'none', penalty, held, meanGain };
});
const best = byVariant.reduce((a, b) => (b.meanGain > a.meanGain ? b : a));
const bestLayer = typeof best.layer === 'number' ? best.layer : undefined;
const training = all.filter((x) => sources.includes(x.source)).map((x) => itemOf(x, bestLayer));
const final = fitReadout(training, best.penalty, DECAYING);
const dev = [...new Set(all.map((x) => x.source).filter((s) => s.startsWith('dev:')))].map((source) =>
  figures(
    final,
    source,
    all.filter((x) => x.source === source).map((x) => itemOf(x, bestLayer)),
  ),
);

// The readout's temperature: fitted by likelihood of the gold level on the development items whose id hashes even
// (bench/eval's fit half, as for the calibration maps), its ECE reported on the others.
const devItems = all.filter((x) => x.source.startsWith('dev:')).map((x) => itemOf(x, bestLayer));
const half = (even: boolean) => devItems.filter((x) => (fnv1a(x.id) % 2 === 0) === even);
const atTemperature = (x: Item, t: number) =>
  normalise(
    final.probabilities(x).map((p) => Math.log(p)),
    t,
  );
const nll = (xs: Item[], t: number) =>
  xs.reduce((s, x) => s - Math.log(Math.max(1e-12, atTemperature(x, t)[x.gold]!)), 0);
let [lo, hi] = [Math.log(0.05), Math.log(20)];
for (let i = 0; i < 80; i++) {
  const [a, b] = [lo + (hi - lo) / 3, hi - (hi - lo) / 3];
  if (nll(half(true), Math.exp(a)) < nll(half(true), Math.exp(b))) hi = b;
  else lo = a;
}
const temperature = devItems.length ? Number(Math.exp((lo + hi) / 2).toFixed(4)) : 1;
const calibration = {
  temperature,
  fittedOn: `development rate items whose id hashes even (${half(true).length})`,
  reportHalf: {
    items: half(false).length,
    eceAtOne: scored(half(false), (x) => atTemperature(x, 1)).ece,
    ece: scored(half(false), (x) => atTemperature(x, temperature)).ece,
    eceShipped: scored(half(false), (x) => normalise(x.z)).ece,
  },
};

const ships =
  best.held.every((h) => h.head.exact > h.shipped.exact) &&
  values.report &&
  dev.every((d) => d.head.withinTol >= d.shipped.withinTol);

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
console.log(
  'leave one source out: exact level of a readout fitted without the source, on it (rate as shipped alongside)',
);
console.log(['layer', 'penalty', ...sources].join('\t'));
for (const v of byVariant)
  console.log([v.layer, v.penalty, ...v.held.map((h) => `${pct(h.head.exact)} (${pct(h.shipped.exact)})`)].join('\t'));
console.log(`best: layer ${best.layer}, penalty ${best.penalty}; ECE left out, readout (shipped):`);
for (const h of best.held) console.log(`${h.source}\t${h.head.ece.toFixed(3)} (${h.shipped.ece.toFixed(3)})`);
console.log(
  `temperature ${temperature} (${calibration.fittedOn}); ECE on the other ${calibration.reportHalf.items}: ` +
    `${calibration.reportHalf.eceAtOne.toFixed(3)} at 1, ${calibration.reportHalf.ece.toFixed(3)} at it ` +
    `(rate as shipped ${calibration.reportHalf.eceShipped.toFixed(3)})`,
);
for (const d of dev)
  console.log(
    `${d.source}\t${d.items}\treadout ${pct(d.head.withinTol)} (exact ${pct(d.head.exact)}, ECE ${d.head.ece.toFixed(3)})` +
      `\tshipped ${pct(d.shipped.withinTol)} (exact ${pct(d.shipped.exact)}, ECE ${d.shipped.ece.toFixed(3)})`,
  );
// A refit on a few items that the test suite repeats from scratch, reading them anew
// (test/real-model/rate-refit.test.ts): the first SMALL_REFIT of each source, the chosen layer and penalty.
const few = sources.flatMap((source) => training.filter((x) => x.source === source).slice(0, SMALL_REFIT));
const small = fitReadout(few, best.penalty, DECAYING);
const smallRefit = {
  items: few.map((x) => x.id),
  layer: bestLayer ?? -1,
  penalty: best.penalty,
  a: small.parameters().a,
  b: small.parameters().b,
  vSum: small.parameters().v.reduce((s, x) => s + x, 0),
  vSquares: small.parameters().v.reduce((s, x) => s + x * x, 0),
  accuracy: small.accuracy(few),
};

const provenance = {
  script: 'bench/train/rate-readout.ts',
  command: `node dist/bench/train/rate-readout.js --per-source ${perSource} --penalties ${penalties.join(',')} --seed ${seed}${values.report ? ' --report' : ''}`,
  seed,
  penalty: best.penalty,
  scales: SCALES,
  margin: MARGIN,
  sources: sets.map((s) => ({
    name: s.name,
    ...s.provenance,
    items: training.filter((x) => x.source === s.name).length,
  })),
  leaveOneSourceOut: best.held,
  development: dev,
  calibration,
  smallRefit,
  fitted: new Date().toISOString().slice(0, 10),
};
recordRun('rate-readout', {
  model,
  layers: LAYERS,
  perSource,
  byVariant,
  best: { layer: best.layer, penalty: best.penalty },
  ships,
  provenance,
});
if (ships) {
  mkdirSync(dirname(values.out), { recursive: true });
  const layer = bestLayer ?? -1; // with no hidden state v is empty and the layer is only what the job asks
  writeFileSync(
    values.out,
    JSON.stringify(
      { modelSha256: model, reading: RATE_READING_VERSION, layer, ...final.parameters(), temperature, provenance },
      null,
      1,
    ) + '\n',
  );
  console.log(`written: ${values.out}`);
} else {
  console.log(
    'not written: the readout does not beat rate as shipped on every source left out and every development set',
  );
}
