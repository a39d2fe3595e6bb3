// Fits the calibration maps (src/decisions/calibration.json) on a bench/eval run of the `fit` half
// with uncalibrated probabilities, and records where they came from.
//
//   node dist/bench/eval.js --half fit --raw --out bench/results/eval-fit-raw.json [--limit N]
//   node dist/bench/calibrate.js [--in bench/results/eval-fit-raw.json] [--out src/decisions/calibration.json]
//
// yes-no and verify: Platt scaling of the log-odds (verify with one more weight for whether a value
// the text gives agrees), against isotonic regression, both measured by two-fold cross-validation
// within the fit half. classify (and each classify-tree level) and rate: one softmax temperature per
// range of option counts, fitted by likelihood of the gold option.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Calibration, Platt, Temperatures } from '../src/decisions/distribution.js';
import { holds, normalise, platt, temperature } from '../src/decisions/distribution.js';
import type { Decision } from './eval-judges.js';
import { ece, type Outcome } from './eval-metrics.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: {
    in: { type: 'string', default: `${root}bench/results/eval-fit-raw.json` },
    out: { type: 'string', default: `${root}src/decisions/calibration.json` },
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
const run: Run = JSON.parse(readFileSync(values.in!, 'utf8'));
if (!run.raw || run.half !== 'fit') throw new Error(`${values.in} must be a --raw run of the fit half`);
const decisions = (cap: string) => run.sets.filter((s) => s.capability === cap).flatMap((s) => s.items.flatMap((i) => i.decisions));

const logit = (p: number) => Math.log(Math.max(1e-12, p)) - Math.log(Math.max(1e-12, 1 - p));

/** Logistic regression of y on features (the last weight is the intercept), Newton's method with a small ridge. */
function logistic(xs: number[][], ys: number[], ridge = 1e-2): number[] {
  const d = xs[0]!.length + 1;
  let w: number[] = Array.from({ length: d }, (_, i) => (i === 0 ? 1 : 0));
  for (let iter = 0; iter < 50; iter++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    xs.forEach((x0, n) => {
      const x = [...x0, 1];
      const p = 1 / (1 + Math.exp(-x.reduce((s, v, i) => s + v * w[i]!, 0)));
      for (let i = 0; i < d; i++) {
        g[i]! += (p - ys[n]!) * x[i]!;
        for (let j = 0; j < d; j++) h[i]![j]! += p * (1 - p) * x[i]! * x[j]!;
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

/** Isotonic regression (pool adjacent violators) of outcomes on probability: a step map. */
function isotonic(train: Outcome[]): (p: number) => number {
  const sorted = [...train].sort((a, b) => a.p - b.p);
  const blocks: { lo: number; sum: number; n: number }[] = [];
  for (const o of sorted) {
    blocks.push({ lo: o.p, sum: o.y, n: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.sum / blocks.at(-2)!.n >= blocks.at(-1)!.sum / blocks.at(-1)!.n) {
      const last = blocks.pop()!;
      blocks.at(-1)!.sum += last.sum;
      blocks.at(-1)!.n += last.n;
    }
  }
  return (p) => {
    let v = blocks[0]!.sum / blocks[0]!.n;
    for (const b of blocks) if (p >= b.lo) v = b.sum / b.n;
    return v;
  };
}

interface Binary {
  x: number;
  agreement: number;
  y: 0 | 1;
}

function fitPlatt(data: Binary[], withAgreement: boolean): Platt {
  const w = logistic(data.map((d) => (withAgreement ? [d.x, d.agreement] : [d.x])), data.map((d) => d.y));
  return withAgreement ? { a: w[0]!, agree: w[1]!, b: w[2]! } : { a: w[0]!, b: w[1]! };
}

/** Two-fold cross-validated ECE and accuracy of Platt and isotonic maps, and none. */
function compareBinary(data: Binary[], withAgreement: boolean) {
  const folds = [data.filter((_, i) => i % 2 === 0), data.filter((_, i) => i % 2 === 1)];
  const held: Record<string, Outcome[]> = { none: [], platt: [], isotonic: [] };
  folds.forEach((test, f) => {
    const train = folds[1 - f]!;
    const map = fitPlatt(train, withAgreement);
    const iso = isotonic(train.map((d) => ({ p: platt({ a: 1, b: 0 }, d.x), y: d.y })));
    for (const d of test) {
      held.none!.push({ p: platt({ a: 1, b: 0 }, d.x), y: d.y });
      held.platt!.push({ p: platt(map, d.x, d.agreement), y: d.y });
      held.isotonic!.push({ p: iso(platt({ a: 1, b: 0 }, d.x)), y: d.y });
    }
  });
  return Object.fromEntries(Object.entries(held).map(([k, o]) => [k, { ece: round(ece(o)), accuracy: round(o.filter((x) => (x.p >= 0.5 ? 1 : 0) === x.y).length / o.length) }]));
}

interface Choice {
  scores: number[];
  gold: number;
}

const RANGES = ['2-2', '3-5', '6-10', '11-20', '21-1000'];

/** Negative log-likelihood of the gold options at temperature t. */
function nll(choices: Choice[], t: number): number {
  return choices.reduce((s, c) => s - Math.log(Math.max(1e-12, normalise(c.scores.map((p) => Math.log(Math.max(1e-12, p))), t)[c.gold]!)), 0);
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

/** One temperature per range of option counts that has at least 20 choices, else the overall one. */
function temperatures(choices: Choice[]): { table: Temperatures; n: Record<string, number>; topEce: { none: number; fitted: number } } {
  const usable = choices.filter((c) => c.gold >= 0);
  const overall = fitTemperature(usable);
  const table: Temperatures = {};
  const n: Record<string, number> = {};
  for (const range of RANGES) {
    const inRange = usable.filter((c) => holds(range, c.scores.length));
    n[range] = inRange.length;
    table[range] = inRange.length >= 20 ? fitTemperature(inRange) : overall;
  }
  const top = (t: (c: Choice) => number): Outcome[] =>
    usable.map((c) => {
      const p = normalise(c.scores.map((x) => Math.log(Math.max(1e-12, x))), t(c));
      const best = p.indexOf(Math.max(...p));
      return { p: p[best]!, y: best === c.gold ? 1 : 0 };
    });
  return { table, n, topEce: { none: round(ece(top(() => 1))), fitted: round(ece(top((c) => temperature(table, c.scores.length)))) } };
}

const round = (x: number) => Math.round(x * 10000) / 10000;

const binary = (cap: string): Binary[] =>
  decisions(cap).flatMap((d) => (d.outcome ? [{ x: logit(d.outcome.p), agreement: d.agreement ?? 0, y: d.outcome.y }] : []));
const yesNo = binary('yes-no');
const verify = binary('verify');
const classifyChoices = [...decisions('classify'), ...decisions('classify-tree')].flatMap((d) => d.choices ?? []);
const rateChoices = decisions('rate').flatMap((d) => d.choices ?? []);
const classify = temperatures(classifyChoices);
const rate = temperatures(rateChoices);
const yesNoMap = fitPlatt(yesNo, false);
const verifyMap = fitPlatt(verify, true);
const roundMap = (m: Platt): Platt => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, round(v)])) as unknown as Platt;

// A Platt map that decides worse than none under cross-validation is not shipped: the map in effect stays.
const shipped: Calibration = JSON.parse(readFileSync(values.out!, 'utf8')).parameters;
const checked = { 'yes-no': compareBinary(yesNo, false), verify: compareBinary(verify, true) };
const better = (cap: keyof typeof checked) => checked[cap].platt!.accuracy >= checked[cap].none!.accuracy;
const parameters: Calibration = {
  'yes-no': better('yes-no') ? roundMap(yesNoMap) : shipped['yes-no'],
  verify: better('verify') ? roundMap(verifyMap) : shipped.verify,
  classify: classify.table,
  rate: rate.table,
};
const provenance = {
  fitted: new Date().toISOString().slice(0, 10),
  model: run.model,
  run: { files: run.files, half: 'fit (ids whose FNV-1a hash is even)', limitPerSet: run.limit, date: run.date },
  method:
    'yes-no: Platt scaling of the Yes/No log-odds; verify: Platt scaling of the check log-odds plus a weight on whether a value the text gives agrees (+1), none does (-1) or none is given (0); ' +
    'classify (every classify-tree level too) and rate: softmax temperature per range of option counts (fitted where the range has at least 20 choices, else the overall temperature), maximum likelihood of the gold option.',
  examples: { 'yes-no': yesNo.length, verify: verify.length, classify: classify.n, rate: rate.n },
  crossValidatedOnFitHalf: checked,
  kept: (['yes-no', 'verify'] as const).filter((cap) => !better(cap)).map((cap) => `${cap}: the fitted map decided worse under cross-validation, the map in effect is kept`),
  topLabelEceOnFitHalf: { classify: classify.topEce, rate: rate.topEce },
};
writeFileSync(values.out!, `${JSON.stringify({ provenance, parameters }, null, 2)}\n`);
console.log(JSON.stringify({ provenance, parameters }, null, 2));
