// The arithmetic of fitting a head, apart from reading: the penalty chosen by stratified k-fold
// accuracy (the zero-shot reading itself one of the candidates), then the head fitted on every
// example. `learn` runs it on a worker thread at a background priority: seconds of arithmetic
// for a hundred examples that would otherwise hold the event loop, and with it every request.
import { Worker } from 'node:worker_threads';
import { argmax } from '../decisions/distribution.js';
import { fit, predict, Projection, type Example, type HeadParams } from './logistic.js';
import { shuffleInPlace, uniform } from './random.js';

const STRENGTHS = [Infinity, 0.1, 0.01, 0.001];
/** The fitting thread's nice value: the background slots' (native/core/thread_priority.h). */
export const BACKGROUND_NICE = 14;

/** The chosen penalty (null: the zero-shot reading kept) and its cross-validated figures. */
export interface PenaltyChoice {
  strength: number | null;
  accuracy: number;
  zeroShot: number;
  folds: number;
  /** Each example's out-of-fold choice (the zero-shot reading's where it is kept). */
  predictions: number[];
}

/** What `learn` comes to: the choice, and the head on every example when a penalty was chosen. */
export interface HeadFit {
  chosen: PenaltyChoice;
  params: HeadParams | null;
}

/** Chooses and fits on a worker thread (learn-worker.ts); the examples are copied to it. */
export function learn(examples: Example[], outcomes: number, folds: number, seed: number): Promise<HeadFit> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./learn-worker.js', import.meta.url), {
      workerData: { examples, outcomes, folds, seed },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the fitting worker exited (${code})`)));
  });
}

/** What the worker runs: `choose`, then the head on every example with the chosen penalty. */
export function learnHere(examples: Example[], outcomes: number, folds: number, seed: number): HeadFit {
  const chosen = choose(examples, outcomes, folds, seed);
  if (chosen.strength === null) return { chosen, params: null };
  const projected = new Projection(examples, seed);
  const all = examples.map((_, i) => i);
  return { chosen, params: projected.params(fit(projected, all, outcomes, chosen.strength), outcomes) };
}

/**
 * The penalty strength with the best stratified k-fold accuracy, or null when none beats the
 * zero-shot reading (ties go to the stronger penalty, then to the zero-shot reading).
 */
export function choose(examples: Example[], outcomes: number, folds: number, seed: number): PenaltyChoice {
  const zeroShot = mean(examples.map((e) => (argmax(e.base) === e.label ? 1 : 0)));
  const fold = stratifiedFolds(
    examples.map((e) => e.label),
    folds,
    seed,
  );
  const k = Math.max(...fold) + 1;
  const p = new Projection(examples, seed);
  let best = { strength: null as number | null, accuracy: zeroShot, predictions: examples.map((e) => argmax(e.base)) };
  if (k < 2) return { ...best, zeroShot, folds: k };
  for (const strength of STRENGTHS) {
    const predictions = new Array<number>(examples.length);
    for (let f = 0; f < k; f++) {
      const train = fold.flatMap((g, i) => (g === f ? [] : [i]));
      const test = fold.flatMap((g, i) => (g === f ? [i] : []));
      const fitted = fit(p, train, outcomes, strength);
      predict(p, fitted, test).forEach((p, j) => (predictions[test[j]!] = p));
    }
    const accuracy = mean(predictions.map((p, i) => (p === examples[i]!.label ? 1 : 0)));
    if (accuracy > best.accuracy + 1e-9) best = { strength, accuracy, predictions };
  }
  return { ...best, zeroShot, folds: k };
}

/** A fold per example: each outcome's examples dealt round the folds in a seeded shuffle. */
function stratifiedFolds(labels: number[], folds: number, seed: number): number[] {
  const random = uniform(seed);
  const fold = new Array<number>(labels.length).fill(0);
  const byLabel = new Map<number, number[]>();
  labels.forEach((l, i) => byLabel.set(l, [...(byLabel.get(l) ?? []), i]));
  const smallest = Math.min(...[...byLabel.values()].map((v) => v.length));
  const k = Math.max(1, Math.min(folds, Math.max(2, smallest)));
  let next = 0;
  for (const members of byLabel.values()) {
    for (const m of shuffleInPlace(members, random)) fold[m] = next++ % k;
  }
  return fold;
}

function mean(v: number[]): number {
  return v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
}
