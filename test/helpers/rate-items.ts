// The items bench/train/rate-readout.ts fits rate's readout on, drawn from vaderSentiment's rated texts,
// shared with the test that refits a few of them (test/real-model/rate-refit.test.ts).
import { shuffleInPlace, uniform } from '../../src/heads/random.js';
import type { RatedSet } from './training-data.js';

export const LAYERS = [16, -1]; // read together; each fitted and reported on its own
const MARGIN = 0.15; // ratings this close to a cut between two levels are left out: their level is a toss-up
const MAX_CHARS = 700;

// General sentiment scales and where their levels' cuts fall on the -4..4 mean rating.
export const SCALES: { levels: string[]; cuts: number[] }[] = [
  { levels: ['very negative', 'negative', 'neutral', 'positive', 'very positive'], cuts: [-2, -0.5, 0.5, 2] },
  {
    levels: [
      'strongly negative',
      'somewhat negative',
      'neither positive nor negative',
      'somewhat positive',
      'strongly positive',
    ],
    cuts: [-2, -0.5, 0.5, 2],
  },
  { levels: ['negative', 'neutral', 'positive'], cuts: [-0.5, 0.5] },
];
export { MARGIN };

export interface Asked {
  id: string;
  source: string;
  text: string;
  scale: string[];
  gold: number;
  tol: number;
}

/** The level of a rating on a scale, or undefined when it lies within MARGIN of a cut. */
function levelOf(rating: number, cuts: number[]): number | undefined {
  if (cuts.some((c) => Math.abs(rating - c) < MARGIN)) return undefined;
  return cuts.filter((c) => rating > c).length;
}

/** perSource items of the k-th set, scales in turn, each scale's levels in turn (as long as a level has texts). */
export function sample(set: RatedSet, k: number, perSource: number, seed: number): Asked[] {
  const random = uniform(seed * 1000 + k);
  const pool = shuffleInPlace([...set.items], random);
  const used = new Set<number>();
  const out: Asked[] = [];
  for (let j = 0; out.length < perSource && j < perSource * 4; j++) {
    const scale = SCALES[j % SCALES.length]!;
    const want = Math.floor(j / SCALES.length) % scale.levels.length;
    const at = pool.findIndex((x, i) => !used.has(i) && levelOf(x.rating, scale.cuts) === want);
    if (at < 0) continue;
    used.add(at);
    out.push({
      id: `${set.name}:${out.length}`,
      source: set.name,
      text: pool[at]!.text.slice(0, MAX_CHARS),
      scale: scale.levels,
      gold: want,
      tol: 0,
    });
  }
  return out;
}

/** The items of a small refit: the first `n` of each source's sample. */
export const SMALL_REFIT = 2;
