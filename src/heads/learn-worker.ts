// The fitting worker (learn.ts): lowers its own thread's priority (a Linux nice value is per
// thread), fits, posts the result and ends.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { BACKGROUND_NICE, learnHere } from './learn.js';
import type { Example } from './logistic.js';

const { examples, outcomes, folds, seed } = workerData as {
  examples: Example[];
  outcomes: number;
  folds: number;
  seed: number;
};
setPriority(BACKGROUND_NICE);
parentPort!.postMessage(learnHere(examples, outcomes, folds, seed));
