// rate's trained readout over the levels on the real model: what bench/train/rate-readout.ts fits on
// (Rate.levelReadings) has rate as shipped for its zero-shot reading and reads each level in full
// after the whole prompt; the fit held at its anchor decides as rate ships; the shipped readout is
// read for the model it was fitted on and rate decides through it.
import t from 'tap';
import type { ScoreJob } from '../../src/binding.js';
import { Rate, RATE_READING_VERSION, RATE_READOUT_FILE } from '../../src/decisions/rate.js';
import { normalise } from '../../src/decisions/distribution.js';
import { OptionReadout } from '../../src/decisions/option-readout.js';
import { serviceOf } from '../../src/service.js';
import { loadConfig } from '../../src/config.js';
import { modelSha256 } from '../../src/models/identity.js';
import { DECAYING, fitReadout } from '../../src/heads/readout-fit.js';
import { openTestEngine, testModelPath } from '../helpers/model.js';
import { decide, scoreRound } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());
const TEXTS = ['Absolutely wonderful, the best meal I have had all year.', 'Cold food, rude staff, never again.'];
const SCALE = ['very negative', 'negative', 'neutral', 'positive', 'very positive'];
const score = (jobs: ScoreJob[]) => scoreRound(engine, jobs);
type Rated = { results: { level: number; scores: number[] }[] };

t.test('the readings z are the levels rate decides by; each level is read in full', async (t) => {
  const rate = new Rate(engine);
  const { z, read } = await rate.levelReadings(score, TEXTS, SCALE, [16, -1]);
  const results = ((await decide(engine, rate, { texts: TEXTS, scale: SCALE })).body as Rated).results;
  results.forEach((r, i) => {
    const p = normalise(z[i]!);
    p.forEach((pk, k) => t.ok(Math.abs(pk - r.scores[k]!) < 1e-4, `level ${k} of text ${i}`));
  });
  t.ok(results[0]!.level > results[1]!.level);
  for (const r of read) {
    t.equal(r.hidden!.length, SCALE.length * 2 * engine.hiddenSize);
    t.equal(r.logprobs.length, SCALE.length);
    t.ok(Array.from(r.logprobs).every((e) => e < 0 && Number.isFinite(e)));
  }
});

t.test('a readout held at its anchor decides as rate ships', async (t) => {
  const rate = new Rate(engine);
  const { z, read } = await rate.levelReadings(score, TEXTS, SCALE, [-1]);
  const items = z.map((zi, i) => ({
    id: String(i),
    source: 'test',
    gold: i === 0 ? 4 : 0,
    z: zi,
    end: Array.from(read[i]!.logprobs),
    dim: engine.hiddenSize,
    hidden: read[i]!.hidden!,
  }));
  const { a, b, v } = fitReadout(items, 1e6, DECAYING).parameters();
  t.ok(Math.abs(a - 1) < 1e-3 && Math.abs(b) < 1e-3 && v.every((x) => Math.abs(x) < 1e-3));
  const readout = new OptionReadout({ modelSha256: 'test', layer: -1, a, b, v, provenance: {} });
  const shipped = ((await decide(engine, rate, { texts: TEXTS, scale: SCALE })).body as Rated).results;
  const held = (
    (await decide(engine, new Rate(engine, undefined, readout), { texts: TEXTS, scale: SCALE })).body as Rated
  ).results;
  held.forEach((r, i) => r.scores.forEach((p, k) => t.ok(Math.abs(p - shipped[i]!.scores[k]!) < 1e-3)));
});

t.test('the shipped readout is read for the default model and rate decides through it', async (t) => {
  const path = await testModelPath();
  const readout = await OptionReadout.forModel(
    () => modelSha256({ model: loadConfig().model, modelPath: path }),
    RATE_READOUT_FILE,
    RATE_READING_VERSION,
  );
  t.ok(readout, 'src/decisions/readouts/rate.json names the default model');
  t.equal(await OptionReadout.forModel(async () => '0'.repeat(64), RATE_READOUT_FILE), undefined);
  const out = await decide(engine, serviceOf(engine, undefined, undefined, readout).rate, {
    texts: TEXTS,
    scale: SCALE,
  });
  const results = (out.body as Rated).results;
  t.ok(results[0]!.level >= 3 && results[1]!.level <= 1, `levels ${results.map((r) => r.level)}`);
  for (const r of results) t.ok(Math.abs(r.scores.reduce((s, p) => s + p, 0) - 1) < 1e-9);
  t.ok(out.inputTokens > 0);
});
