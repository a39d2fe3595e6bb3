// What bench/rate-readout.ts fits on (Rate.levelReadings) on the real model: its zero-shot reading
// is rate as shipped, and each level is read written out in full after the whole prompt, one hidden
// row per layer asked.
import t from 'tap';
import { Rate } from '../../src/decisions/rate.js';
import { normalise } from '../../src/decisions/distribution.js';
import { openTestEngine } from '../helpers/model.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());
const TEXTS = ['Absolutely wonderful, the best meal I have had all year.', 'Cold food, rude staff, never again.'];
const SCALE = ['very negative', 'negative', 'neutral', 'positive', 'very positive'];
const score = (jobs: Parameters<typeof engine.score>[0]) => engine.score(jobs);

t.test('the readings z are the levels rate decides by; each level is read in full', async (t) => {
  const rate = new Rate(engine);
  const { z, read } = await rate.levelReadings(score, TEXTS, SCALE, [16, -1]);
  const out = await rate.run({ texts: TEXTS, scale: SCALE });
  const results = (out.body as { results: { level: number; scores: number[] }[] }).results;
  results.forEach((r, i) => {
    const p = normalise(z[i]!);
    p.forEach((pk, k) => t.ok(Math.abs(pk - r.scores[k]!) < 1e-4, `level ${k} of text ${i}`));
  });
  t.same(
    results.map((r) => r.level),
    [4, 0],
  );
  for (const r of read) {
    t.equal(r.hidden!.length, SCALE.length * 2 * engine.hiddenSize);
    t.equal(r.logprobs.length, SCALE.length);
    t.ok(Array.from(r.logprobs).every((e) => e < 0 && Number.isFinite(e)));
  }
});
