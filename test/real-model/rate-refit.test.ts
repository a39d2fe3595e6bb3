// The shipped rate readout's small refit, repeated from scratch: the first items of each vader
// source (fetched from the registry as the refit fetches them), read anew on the real model and
// fitted at the shipped layer and penalty, give the parameters bench/train/rate-readout.ts recorded in
// src/decisions/readouts/rate.json. Reading is bit-identical whatever ran before (issue 48) and
// the fit is plain arithmetic, so the figures must match exactly.
import t from 'tap';
import type { ScoreJob } from '../../src/binding.js';
import { readFileSync } from 'node:fs';
import { Rate, RATE_READOUT_FILE } from '../../src/decisions/rate.js';
import { DECAYING, fitReadout } from '../../src/heads/readout-fit.js';
import { LAYERS, sample } from '../helpers/rate-items.js';
import { vader } from '../helpers/training-data.js';
import { openTestEngine } from '../helpers/model.js';
import { scoreRound } from '../helpers/requests.js';

interface Recorded {
  provenance: {
    seed: number;
    sources: { name: string }[];
    command: string;
    smallRefit: {
      items: string[];
      layer: number;
      penalty: number;
      a: number;
      b: number;
      vSum: number;
      vSquares: number;
      accuracy: number;
    };
  };
}
const { provenance } = JSON.parse(readFileSync(RATE_READOUT_FILE, 'utf8')) as Recorded;
const recorded = provenance.smallRefit;
const perSource = Number(/--per-source (\d+)/.exec(provenance.command)![1]);

const engine = await openTestEngine();
t.teardown(() => engine.close());

t.test('a refit on a few items read anew reproduces the recorded figures', async (t) => {
  const sets = await vader();
  const wanted = new Set(recorded.items);
  const asked = sets.flatMap((s, k) => sample(s, k, perSource, provenance.seed)).filter((a) => wanted.has(a.id));
  t.same(
    asked.map((a) => a.id),
    recorded.items,
    'the same items, drawn from the archive as the refit drew them',
  );
  const rate = new Rate(engine);
  const score = (jobs: ScoreJob[]) => scoreRound(engine, jobs);
  const layer = LAYERS.indexOf(recorded.layer);
  const items = [];
  for (const a of asked) {
    const { z, read } = await rate.levelReadings(score, [a.text], a.scale, LAYERS);
    const r = read[0]!;
    const dim = engine.hiddenSize;
    const hidden = new Float32Array(a.scale.length * dim);
    for (let o = 0; o < a.scale.length; o++)
      hidden.set(r.hidden!.subarray((o * LAYERS.length + layer) * dim, (o * LAYERS.length + layer + 1) * dim), o * dim);
    items.push({ id: a.id, source: a.source, gold: a.gold, z: z[0]!, end: Array.from(r.logprobs), dim, hidden });
  }
  const fitted = fitReadout(items, recorded.penalty, DECAYING);
  const { a, b, v } = fitted.parameters();
  t.equal(a, recorded.a, 'a');
  t.equal(b, recorded.b, 'b');
  t.equal(
    v.reduce((s, x) => s + x, 0),
    recorded.vSum,
    'the sum of v',
  );
  t.equal(
    v.reduce((s, x) => s + x * x, 0),
    recorded.vSquares,
    'the sum of the squares of v',
  );
  t.equal(fitted.accuracy(items), recorded.accuracy, 'its accuracy on them');
});
