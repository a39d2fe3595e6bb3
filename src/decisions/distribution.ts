// Turning option log-probabilities into the spec's numbers, through the calibration maps fitted by
// bench/train/calibrate.ts and shipped as data with their provenance (calibration.json, see
// docs/capabilities.md "Calibration").
import { readFileSync } from 'node:fs';

/**
 * Platt scaling of a log-odds x: sigmoid(a x + b); verify adds `agree` times +1 / -1 / 0. With
 * `points` (isotonic regression), the result is then mapped through a rising piecewise-linear
 * curve: each point is [Platt output, probability], both ascending; flat before the first point
 * and after the last. Linear between points, so two decisions keep the order of their odds.
 */
export interface Platt {
  a: number;
  b: number;
  agree?: number;
  points?: [number, number][];
}

/** Softmax temperatures by option count: keys "lo-hi" (inclusive), the first range holding n applies. */
export type Temperatures = Record<string, number>;

export interface Calibration {
  'yes-no': Platt;
  verify: Platt;
  classify: Temperatures;
  rate: Temperatures;
}

/** The uncalibrated numbers: what bench/train/calibrate.ts fits on (bench/eval/eval --raw). */
export const IDENTITY: Calibration = {
  'yes-no': { a: 1, b: 0 },
  verify: { a: 1, b: 0, agree: 0 },
  classify: {},
  rate: {},
};

/** In effect for every decision; bench/eval/eval --raw replaces it with IDENTITY. */
export const calibration: Calibration = JSON.parse(
  readFileSync(new URL('../../../src/decisions/calibration.json', import.meta.url), 'utf8'),
).parameters;

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** The log-odds of a probability, kept finite at 0 and 1. */
export function logit(p: number): number {
  return Math.log(Math.max(1e-12, p)) - Math.log(Math.max(1e-12, 1 - p));
}

/** A calibrated probability from log-odds (and, for verify, whether a value found agrees: +1, -1, 0). */
export function platt(map: Platt, logOdds: number, agree = 0): number {
  const p = sigmoid(map.a * logOdds + map.b + (map.agree ?? 0) * agree);
  const points = map.points;
  if (!points) return p;
  const next = points.findIndex(([at]) => p < at);
  if (next === 0) return points[0]![1];
  if (next === -1) return points.at(-1)![1];
  const [x0, y0] = points[next - 1]!;
  const [x1, y1] = points[next]!;
  return y0 + ((y1 - y0) * (p - x0)) / (x1 - x0);
}

/** Whether a range "lo-hi" of option counts holds n. */
export function holds(range: string, n: number): boolean {
  const [lo, hi = lo] = range.split('-').map(Number);
  return n >= lo! && n <= hi!;
}

export function temperature(table: Temperatures, options: number): number {
  for (const [range, t] of Object.entries(table)) if (holds(range, options)) return t;
  return 1;
}

/** Normalised probabilities (softmax) of log-probabilities, divided by a temperature first. */
export function normalise(logprobs: ArrayLike<number>, t = 1): number[] {
  let max = -Infinity;
  for (let i = 0; i < logprobs.length; i++) max = Math.max(max, logprobs[i]!);
  const exp = Array.from(logprobs, (x) => Math.exp((x - max) / t));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((x) => x / sum);
}

/** 1 minus normalised entropy: 1 for one clear winner, 0 for a flat distribution. */
export function confidence(p: number[]): number {
  if (p.length < 2) return 1;
  const h = p.reduce((sum, x) => (x > 0 ? sum - x * Math.log(x) : sum), 0);
  return Math.min(1, Math.max(0, 1 - h / Math.log(p.length)));
}

export function argmax(p: number[]): number {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
}
