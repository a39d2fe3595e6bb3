// The trained readout of choices among options (src/decisions/option-readout.ts) on the real model:
// classify decides through it when given one, and bench/train/readouts.ts's fit of it starts from, and
// with a large penalty stays at, the zero-shot reading.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceOf } from '../../src/service.js';
import { READING_VERSION } from '../../src/decisions/reading.js';
import { OptionReadout } from '../../src/decisions/option-readout.js';
import { Classify } from '../../src/decisions/classify.js';
import { labelsOf } from '../../src/decisions/labels.js';
import { fitReadout, type Item } from '../../src/heads/readout-fit.js';
import { openTestEngine } from '../helpers/model.js';
import { decide } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());
const TEXTS = ['The striker scored twice in the final.', 'Parliament voted on the new tax law.'];
const LABELS = ['sports news', 'politics', 'cooking recipe'];

async function items(): Promise<Item[]> {
  const classify = new Classify(engine);
  const session = engine.admit();
  const { z, read } = await classify
    .optionReadings(session, TEXTS, labelsOf(LABELS), -1)
    .finally(() => session.close());
  return z.map((zi, i) => ({
    id: String(i),
    source: 'test',
    gold: i,
    z: zi,
    end: Array.from(read[i]!.logprobs),
    dim: engine.hiddenSize,
    hidden: read[i]!.hidden!,
  }));
}

t.test(
  'each label is read after the whole prompt: one hidden row per label, the end of the reply scored',
  async (t) => {
    const [first] = await items();
    t.equal(first!.hidden.length, LABELS.length * engine.hiddenSize);
    t.equal(first!.end.length, LABELS.length);
    t.ok(first!.end.every((e) => e < 0 && Number.isFinite(e)));
  },
);

t.test('classify decides through a readout, in the response shape it always has', async (t) => {
  const fitted = fitReadout(await items(), 1e6); // held at the zero-shot reading
  const { a, b, v } = fitted.parameters();
  t.ok(Math.abs(a - 1) < 1e-3 && Math.abs(b) < 1e-3 && v.every((x) => Math.abs(x) < 1e-3));
  const readout = new OptionReadout({ modelSha256: 'test', layer: -1, a, b, v, provenance: {} });
  const out = await decide(engine, serviceOf(engine, undefined, readout).classify, { texts: TEXTS, labels: LABELS });
  const results = (out.body as { results: { label: string; probability: number; scores: Record<string, number> }[] })
    .results;
  t.same(
    results.map((r) => r.label),
    ['sports news', 'politics'],
  );
  for (const r of results) t.ok(Math.abs(Object.values(r.scores).reduce((s, p) => s + p, 0) - 1) < 1e-9);
  t.ok(out.inputTokens > 0);
});

t.test('a readout file is read only for the model and the reading it was fitted on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'readout-'));
  t.teardown(() => rmSync(dir, { recursive: true }));
  const file = join(dir, 'options.json');
  const earlier = join(dir, 'earlier.json');
  const v = Array.from({ length: engine.hiddenSize }, () => 0);
  const data = { modelSha256: 'a'.repeat(64), layer: -1, a: 1, b: 0, v, provenance: {} };
  writeFileSync(file, JSON.stringify({ ...data, reading: READING_VERSION }));
  writeFileSync(earlier, JSON.stringify(data));
  t.ok(await OptionReadout.forModel(async () => 'a'.repeat(64), file));
  t.equal(await OptionReadout.forModel(async () => 'b'.repeat(64), file), undefined);
  t.equal(await OptionReadout.forModel(async () => 'a'.repeat(64), join(dir, 'none.json')), undefined);
  t.equal(await OptionReadout.forModel(async () => 'a'.repeat(64), earlier), undefined, 'fitted on an earlier reading');
});
