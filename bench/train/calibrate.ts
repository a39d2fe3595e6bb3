// Fits the calibration maps (src/decisions/calibration.json) on bench/eval/eval.ts runs of the `fit`
// half with uncalibrated probabilities, measures every candidate map on runs of the `report` half
// (never on a fitted item), ships the one with the lowest held-out ECE, and records where it came
// from.
//
//   node dist/bench/eval/eval.js --half fit --raw --cap yes-no,verify
//     (and --cap classify,classify-tree, --cap rate; the same three with --half report): six runs in
//     bench/results/eval.json
//   node dist/bench/train/calibrate.js [--in RUN]... [--report RUN]... (several runs of a half, one per
//     capability group; a RUN is a run of bench/results/eval.json named by its arguments, as
//     "--half fit --raw --cap rate", or a file eval.js --out wrote; by default the six runs above)
//       [--out src/decisions/calibration.json] [--svg docs/reliability.svg]
//
// Candidates. yes-no and verify: the map in effect, none, a prior correction (a bias only), Platt
// scaling of the log-odds (verify with one more weight for whether a value the text gives agrees),
// and isotonic regression of the Platt output; fitted and measured on decisions balanced per source
// and outcome (each set weighs the same, and within it true and false weigh half each), so a map
// assumes an even prior on every decision instead of the mixture's share of true statements (a
// map fitted on the mixture as sampled carries its base rate into every answer). The map shipped
// has the lowest mean of its held-out ECE balanced so and as the sets sampled their decisions,
// among the maps that decide at least as many held-out decisions right as the map in effect.
// classify (and each classify-tree level) and rate: the map in effect, none, one softmax
// temperature, and one per range of option counts, each fitted by likelihood of the gold option.
// Prints the per-set table before (the map in effect) and after.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Calibration, Platt, Temperatures } from '../../src/decisions/distribution.js';
import { holds, logit, normalise, platt, temperature } from '../../src/decisions/distribution.js';
import { findModel } from '../../src/models/manifest.js';
import type { Decision } from '../eval/judges.js';
import { brier, ece, reliabilitySvg, type Outcome } from '../eval/metrics.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// The capability groups the eval runs are split into, and the runs of each half by their arguments.
const GROUPS = ['yes-no,verify', 'classify,classify-tree', 'rate'];
const runsOf = (half: string) => GROUPS.map((caps) => `--half ${half} --raw --cap ${caps}`);
const EVAL = `${root}bench/results/eval.json`;
const { values } = parseArgs({
  options: {
    in: { type: 'string', multiple: true, default: runsOf('fit') },
    report: { type: 'string', multiple: true, default: runsOf('report') },
    out: { type: 'string', default: `${root}src/decisions/calibration.json` },
    svg: { type: 'string' },
    'results-out': { type: 'string', default: `${root}bench/results/calibration-report.json` },
  },
});

interface Run {
  model: string;
  raw: boolean;
  half: string;
  limit: number | null;
  date: string;
  files: string[];
  sets: { set: string; capability: string; items: { id: string; decisions: Decision[] }[] }[];
}
/** A run of bench/results/eval.json by its arguments, or a file eval.js --out wrote. */
function readRun(name: string): Run {
  if (name.endsWith('.json') && existsSync(name)) return JSON.parse(readFileSync(name, 'utf8'));
  const runs = (JSON.parse(readFileSync(EVAL, 'utf8')) as { runs: Record<string, Run> }).runs;
  if (!runs[name]) throw new Error(`no run "${name}" in ${EVAL} (runs: ${Object.keys(runs).join('; ')})`);
  return runs[name];
}
/** Where a run was read from, for the record. */
const sourceOf = (name: string) =>
  name.endsWith('.json') && existsSync(name) ? relative(root, name) : `${relative(root, EVAL)}: ${name}`;

/** Runs of one half (e.g. one per group of capabilities, each with its own --limit), read as one. */
function readRuns(files: string[], half: string): Run & { runs: Omit<Run, 'sets'>[] } {
  const runs: Run[] = files.map(readRun);
  for (const [i, r] of runs.entries())
    if (!r.raw || r.half !== half) throw new Error(`${files[i]} must be a --raw run of the ${half} half`);
  if (new Set(runs.map((r) => r.model)).size > 1) throw new Error(`${files.join(', ')}: runs of different models`);
  return {
    ...runs[0]!,
    sets: runs.flatMap((r) => r.sets),
    runs: runs.map(({ sets: _, ...r }) => ({ ...r, caps: [...new Set(_.map((s) => s.capability))] })),
  };
}
const run = readRuns(values.in!, 'fit');
const report = readRuns(values.report!, 'report');
const decisionsOf = (r: Run, cap: string) =>
  r.sets.filter((s) => s.capability === cap).flatMap((s) => s.items.flatMap((i) => i.decisions));

/**
 * Logistic regression of y on features, each example weighted by ws (the last weight is the intercept), Newton's
 * method with a small ridge.
 */
function logistic(xs: number[][], ys: number[], ws: number[], ridge = 1e-2): number[] {
  const d = xs[0]!.length + 1;
  let w: number[] = Array.from({ length: d }, (_, i) => (i === 0 ? 1 : 0));
  for (let iter = 0; iter < 50; iter++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    xs.forEach((x0, n) => {
      const x = [...x0, 1];
      const p = 1 / (1 + Math.exp(-x.reduce((s, v, i) => s + v * w[i]!, 0)));
      for (let i = 0; i < d; i++) {
        g[i]! += ws[n]! * (p - ys[n]!) * x[i]!;
        for (let j = 0; j < d; j++) h[i]![j]! += ws[n]! * p * (1 - p) * x[i]! * x[j]!;
      }
    });
    for (let i = 0; i < d - 1; i++) {
      g[i]! += ridge * (w[i]! - (i === 0 ? 1 : 0)); // shrink towards the identity map
      h[i]![i]! += ridge;
    }
    h[d - 1]![d - 1]! += 1e-9;
    const step = solve(h, g);
    w = w.map((v, i) => v - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-8) break;
  }
  return w;
}

function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    const pivot = m.slice(c).reduce((best, row, i) => (Math.abs(row[c]!) > Math.abs(m[best]![c]!) ? c + i : best), c);
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c || m[c]![c] === 0) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => (row[i] === 0 ? 0 : row[n]! / row[i]!));
}

/**
 * Isotonic regression (pool adjacent violators) of outcomes on probability, as points [mean probability of a block,
 * its share of outcomes] for the curve that `platt` follows between them; each share is smoothed (+1 / +2) so none is
 * 0 or 1, and blocks are pooled until the smoothed shares rise (smoothing pulls a light block further toward 1/2).
 */
function isotonic(train: Outcome[]): [number, number][] {
  const sorted = [...train].sort((a, b) => a.p - b.p);
  const blocks: { p: number; y: number; n: number }[] = []; // weighted sums of p and y, and the weight
  const share = (b: { y: number; n: number }) => (b.y + 1) / (b.n + 2);
  for (const o of sorted) {
    const w = o.w ?? 1;
    blocks.push({ p: o.p * w, y: o.y * w, n: w });
    while (blocks.length > 1 && share(blocks.at(-2)!) >= share(blocks.at(-1)!)) {
      const last = blocks.pop()!;
      blocks.at(-1)!.p += last.p;
      blocks.at(-1)!.y += last.y;
      blocks.at(-1)!.n += last.n;
    }
  }
  return blocks.map((b) => [round(b.p / b.n), round(share(b))]);
}

interface Binary {
  x: number; // the raw log-odds
  agreement: number;
  y: 0 | 1;
  w: number; // weight: every set, and within it every outcome, weighs the same (mean 1)
}

function binary(r: Run, cap: string): Binary[] {
  const sets = r.sets
    .filter((s) => s.capability === cap)
    .map((s) => s.items.flatMap((i) => i.decisions).flatMap((d) => (d.outcome ? [d] : [])))
    .filter((ds) => ds.length > 0);
  const n = sets.reduce((s, ds) => s + ds.length, 0);
  return sets.flatMap((ds) => {
    const outcomes = new Set(ds.map((d) => d.outcome!.y)).size;
    const count = (y: number) => ds.filter((d) => d.outcome!.y === y).length;
    return ds.map((d) => ({
      x: logit(d.outcome!.p),
      agreement: d.agreement ?? 0,
      y: d.outcome!.y,
      w: n / sets.length / outcomes / count(d.outcome!.y),
    }));
  });
}

function fitPlatt(data: Binary[], withAgreement: boolean, slope = true): Platt {
  const features = (d: Binary) => [...(slope ? [d.x] : []), ...(withAgreement ? [d.agreement] : [])];
  // Without a slope the log-odds enter as an offset: fitted on y with x fixed at weight 1.
  const w = slope
    ? logistic(
        data.map(features),
        data.map((d) => d.y),
        data.map((d) => d.w),
      )
    : logisticOffset(
        data.map(features),
        data.map((d) => d.x),
        data.map((d) => d.y),
        data.map((d) => d.w),
      );
  const [a, agree, b] = slope
    ? withAgreement
      ? [w[0]!, w[1]!, w[2]!]
      : [w[0]!, 0, w[1]!]
    : withAgreement
      ? [1, w[0]!, w[1]!]
      : [1, 0, w[0]!];
  return roundMap(withAgreement ? { a, b, agree } : { a, b });
}

/** Logistic regression with a fixed offset added to the linear term (the last weight is the intercept). */
function logisticOffset(xs: number[][], offsets: number[], ys: number[], ws: number[]): number[] {
  const d = xs[0]!.length + 1;
  let w = new Array<number>(d).fill(0);
  for (let iter = 0; iter < 50; iter++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    xs.forEach((x0, n) => {
      const x = [...x0, 1];
      const p = 1 / (1 + Math.exp(-(offsets[n]! + x.reduce((s, v, i) => s + v * w[i]!, 0))));
      for (let i = 0; i < d; i++) {
        g[i]! += ws[n]! * (p - ys[n]!) * x[i]!;
        for (let j = 0; j < d; j++) h[i]![j]! += ws[n]! * p * (1 - p) * x[i]! * x[j]!;
      }
    });
    for (let i = 0; i < d; i++) h[i]![i]! += 1e-6;
    const step = solve(h, g);
    w = w.map((v, i) => v - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-8) break;
  }
  return w;
}

/** The candidate maps for a probability of one outcome, fitted on the fit half. */
function binaryCandidates(fit: Binary[], withAgreement: boolean, inEffect: Platt): Record<string, Platt> {
  const plattMap = fitPlatt(fit, withAgreement);
  const points = isotonic(outcomesOf(fit, plattMap));
  return {
    'in effect': inEffect,
    none: { a: 1, b: 0 },
    prior: fitPlatt(fit, withAgreement, false),
    platt: plattMap,
    'platt+isotonic': { ...plattMap, points },
  };
}

const outcomesOf = (data: Binary[], map: Platt): Outcome[] =>
  data.map((d) => ({ p: platt(map, d.x, d.agreement), y: d.y, w: d.w }));

interface Measure {
  n: number;
  accuracy: number;
  ece: number;
  brier: number;
  /** The same outcomes unweighted, as the sets sampled them (binary maps only). */
  asSampled?: { accuracy: number; ece: number };
}

const rightShare = (o: Outcome[]) =>
  o.reduce((s, x) => s + ((x.p >= 0.5 ? 1 : 0) === x.y ? (x.w ?? 1) : 0), 0) / o.reduce((s, x) => s + (x.w ?? 1), 0);

/** Held-out figures of stated probabilities; a binary decision is right when (p >= 0.5) is the outcome. */
function measure(o: Outcome[], decides: boolean, right?: number): Measure {
  const figures = { n: o.length, accuracy: round(decides ? rightShare(o) : right!), ece: round(ece(o)) };
  if (!decides) return { ...figures, brier: round(brier(o)) };
  const sampled = o.map(({ p, y }) => ({ p, y }));
  return {
    ...figures,
    brier: round(brier(o)),
    asSampled: { accuracy: round(rightShare(sampled)), ece: round(ece(sampled)) },
  };
}

interface Choice {
  scores: number[];
  gold: number;
}

const RANGES = ['2-2', '3-5', '6-10', '11-20', '21-1000'];
const logs = (c: Choice) => c.scores.map((p) => Math.log(Math.max(1e-12, p)));

/** Negative log-likelihood of the gold options at temperature t. */
function nll(choices: Choice[], t: number): number {
  return choices.reduce((s, c) => s - Math.log(Math.max(1e-12, normalise(logs(c), t)[c.gold]!)), 0);
}

function fitTemperature(choices: Choice[]): number {
  let lo = Math.log(0.05);
  let hi = Math.log(20);
  for (let i = 0; i < 80; i++) {
    const a = lo + (hi - lo) / 3;
    const b = hi - (hi - lo) / 3;
    if (nll(choices, Math.exp(a)) < nll(choices, Math.exp(b))) hi = b;
    else lo = a;
  }
  return round(Math.exp((lo + hi) / 2));
}

const choicesOf = (r: Run, caps: string[]): Choice[] =>
  caps
    .flatMap((cap) => decisionsOf(r, cap))
    .flatMap((d) => d.choices ?? [])
    .filter((c) => c.gold >= 0);
const table = (t: number): Temperatures => Object.fromEntries(RANGES.map((r) => [r, t]));

/** One temperature per range of option counts that has at least 20 choices, else the overall one. */
function temperatures(choices: Choice[]): { table: Temperatures; n: Record<string, number> } {
  const overall = fitTemperature(choices);
  const n = Object.fromEntries(
    RANGES.map((range) => [range, choices.filter((c) => holds(range, c.scores.length)).length]),
  );
  return {
    table: Object.fromEntries(
      RANGES.map((range) => [
        range,
        n[range]! >= 20 ? fitTemperature(choices.filter((c) => holds(range, c.scores.length))) : overall,
      ]),
    ),
    n,
  };
}

/** The top option's probability at the table's temperature, against its being the gold one. */
const topOutcomes = (choices: Choice[], t: Temperatures): Outcome[] =>
  choices.map((c) => {
    const p = normalise(logs(c), temperature(t, c.scores.length));
    const best = p.indexOf(Math.max(...p));
    return { p: p[best]!, y: best === c.gold ? 1 : 0 };
  });

const round = (x: number) => Math.round(x * 10000) / 10000;
const roundMap = (m: Platt): Platt =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v])) as unknown as Platt;
/** A binary map answers to an even prior and to the sets' own mixes alike: the mean of its two ECEs. */
const eceOf = (m: Measure) => (m.asSampled ? (m.ece + m.asSampled.ece) / 2 : m.ece);
/** Decisions right as the sets sampled them (a temperature never changes one). */
const rightOf = (m: Measure) => m.asSampled?.accuracy ?? m.accuracy;
/** The lowest ECE among the maps that decide as many held-out decisions right as the map in effect. */
const lowestEce = (measured: Record<string, Measure>) =>
  Object.entries(measured)
    .filter(([, m]) => rightOf(m) >= rightOf(measured['in effect']!))
    .sort((a, b) => eceOf(a[1]) - eceOf(b[1]))[0]![0];

const shipped: Calibration = JSON.parse(readFileSync(values.out!, 'utf8')).parameters;
const measured: Record<string, Record<string, Measure>> = {};
const chosen: Record<string, string> = {};

const binaryMaps: Record<'yes-no' | 'verify', Platt> = { 'yes-no': shipped['yes-no'], verify: shipped.verify };
const examples: Record<string, unknown> = {};
for (const cap of ['yes-no', 'verify'] as const) {
  const fit = binary(run, cap);
  const held = binary(report, cap);
  if (!fit.length || !held.length) continue; // not run: the map in effect stays
  const candidates = binaryCandidates(fit, cap === 'verify', shipped[cap]);
  measured[cap] = Object.fromEntries(
    Object.entries(candidates).map(([name, map]) => [name, measure(outcomesOf(held, map), true)]),
  );
  chosen[cap] = lowestEce(measured[cap]!);
  binaryMaps[cap] = candidates[chosen[cap]!]!;
  examples[cap] = { fit: fit.length, report: held.length };
}

// Choices: classify-tree levels are classify decisions among that level's labels, fitted together.
const choiceTables: Record<'classify' | 'rate', Temperatures> = { classify: shipped.classify, rate: shipped.rate };
for (const [cap, caps] of [
  ['classify', ['classify', 'classify-tree']],
  ['rate', ['rate']],
] as const) {
  const fit = choicesOf(run, [...caps]);
  const held = choicesOf(report, [cap]); // the top label of the capability itself
  if (!fit.length || !held.length) continue;
  const ranged = temperatures(fit);
  const candidates: Record<string, Temperatures> = {
    'in effect': shipped[cap],
    none: {},
    temperature: table(fitTemperature(fit)),
    'temperature per option count': ranged.table,
  };
  const right = held.filter((c) => logs(c).indexOf(Math.max(...logs(c))) === c.gold).length / held.length;
  measured[cap] = Object.fromEntries(
    Object.entries(candidates).map(([name, t]) => [name, measure(topOutcomes(held, t), false, right)]),
  );
  chosen[cap] = lowestEce(measured[cap]!);
  choiceTables[cap] = candidates[chosen[cap]!]!;
  examples[cap] = { fit: ranged.n, report: held.length };
}

const parameters: Calibration = {
  'yes-no': binaryMaps['yes-no'],
  verify: binaryMaps.verify,
  classify: choiceTables.classify,
  rate: choiceTables.rate,
};

/** One set's figures on the report half under a calibration: decisions right, and the probabilities' ECE. */
function perSet(set: Run['sets'][number], c: Calibration): { accuracy: number; ece?: number } {
  const ds = set.items.flatMap((i) => i.decisions);
  let outcomes: Outcome[] = ds.flatMap((d) => (d.outcome ? [d.outcome] : []));
  let right = ds.filter((d) => d.ok).length;
  if (set.capability === 'yes-no' || set.capability === 'verify') {
    const map = c[set.capability];
    outcomes = ds.map((d) => ({ p: platt(map, logit(d.outcome!.p), d.agreement ?? 0), y: d.outcome!.y }));
    right = outcomes.filter((o) => (o.p >= 0.5 ? 1 : 0) === o.y).length;
  } else if (set.capability === 'classify' || set.capability === 'rate') {
    outcomes = topOutcomes(
      ds.flatMap((d) => d.choices ?? []).filter((ch) => ch.gold >= 0),
      c[set.capability],
    );
  } // classify-tree: the path's probability is the product over levels the run did not all record; kept as run
  // rate is judged within the gold's tolerance; its outcome is the exact level.
  return { accuracy: round(right / ds.length), ...(outcomes.length ? { ece: round(ece(outcomes)) } : {}) };
}

const sets = report.sets.map((s) => ({
  set: s.set,
  capability: s.capability,
  cases: s.items.length,
  before: perSet(s, shipped),
  after: perSet(s, parameters),
}));
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const limits = (r: typeof report) =>
  r.runs.map((x: any) => `${x.caps.join(', ')}: at most ${x.limit ?? 'all'} per set`).join('; ');
console.log(`report half of ${report.files.join(', ')} (${limits(report)})\n`);
console.log(
  '| set | capability | cases | accuracy before | after | ECE before | after |\n|---|---|---|---|---|---|---|',
);
for (const s of sets)
  console.log(
    `| ${s.set} | ${s.capability} | ${s.cases} | ${pct(s.before.accuracy)} | ${pct(s.after.accuracy)} | ${s.before.ece?.toFixed(3) ?? '-'} | ${s.after.ece?.toFixed(3) ?? '-'} |`,
  );
console.log(
  '\n| capability | map | held-out n | accuracy | ECE | Brier | as sampled: accuracy | ECE |\n|---|---|---|---|---|---|---|---|',
);
for (const [cap, byMap] of Object.entries(measured))
  for (const [name, m] of Object.entries(byMap))
    console.log(
      `| ${cap} | ${name}${name === chosen[cap] ? ' (shipped)' : ''} | ${m.n} | ${pct(m.accuracy)} | ${m.ece.toFixed(3)} | ${m.brier.toFixed(3)} | ${m.asSampled ? pct(m.asSampled.accuracy) : '-'} | ${m.asSampled?.ece.toFixed(3) ?? '-'} |`,
    );

const half = (r: typeof run, which: string) => ({
  files: r.files,
  half: which,
  runs: r.runs.map((x: any) => ({ capabilities: x.caps, limitPerSet: x.limit, date: x.date })),
});
const provenance = {
  fitted: new Date().toISOString().slice(0, 10),
  model: run.model,
  modelSha256: findModel(run.model)?.sha256 ?? null,
  fit: half(run, 'fit (ids whose FNV-1a hash is even)'),
  report: half(report, 'report (ids whose FNV-1a hash is odd)'),
  method:
    'Candidates fitted on the fit half, measured on the report half, the lowest ECE there shipped. yes-no and verify: fitted and measured on decisions balanced per set and outcome (each set the same weight, true and false half of it each: the maps assume an even prior on every decision), the map shipped the one with the lowest mean of that ECE and the ECE as the sets sampled their decisions, among those that decide as many held-out decisions right (as sampled) as the map in effect; prior correction (a bias), Platt scaling of the log-odds (verify: plus a weight on whether a value the text gives agrees, +1 / -1 / 0), isotonic regression of the Platt output (points of a rising piecewise-linear curve, shares smoothed +1/+2); ' +
    'classify (every classify-tree level too) and rate: softmax temperature, one overall or one per range of option counts (where the range has at least 20 choices), maximum likelihood of the gold option; ECE of the top option.',
  examples,
  chosen,
  kept: Object.entries(chosen)
    .filter(([, m]) => m === 'in effect')
    .map(
      ([cap]) =>
        `${cap}: the map in effect (an earlier fit) is kept: no candidate that decides as many held-out decisions right has a lower ECE`,
    ),
  measuredOnReportHalf: measured,
};
writeFileSync(values.out!, `${JSON.stringify({ provenance, parameters }, null, 2)}\n`);
writeFileSync(
  values['results-out']!,
  `${JSON.stringify({ report: values.report!.map(sourceOf), fit: values.in!.map(sourceOf), measured, chosen, sets }, null, 1)}\n`,
);
if (values.svg) {
  const curves = new Map<string, Outcome[]>([
    ['yes-no', outcomesOf(binary(report, 'yes-no'), parameters['yes-no'])],
    ['verify', outcomesOf(binary(report, 'verify'), parameters.verify)],
    ['classify (top label)', topOutcomes(choicesOf(report, ['classify']), parameters.classify)],
    ['rate (top level)', topOutcomes(choicesOf(report, ['rate']), parameters.rate)],
  ]);
  writeFileSync(
    values.svg,
    reliabilitySvg(
      `Reliability after calibration, report half (${report.sets.reduce((n, x) => n + x.items.length, 0)} items)`,
      curves,
    ),
  );
}
