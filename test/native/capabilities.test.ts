// classify, classify-tree and rate on the real model: clear cases decided correctly.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { decisions } from '../../src/service.js';
import { testModelPath } from '../helpers/model.js';

const engine = await Engine.open({ modelPath: await testModelPath(), slots: 2, threads: 2, queue: 2, contextSize: 4096, batchSize: 256 });
t.teardown(() => engine.close());
const s = decisions(engine);

t.test('classify picks the clear topic, multi-token labels included', async (t) => {
  const out = await s.classify.run({ texts: ['The striker scored twice in the final.', 'Parliament voted on the new tax law.'], labels: ['sports news', 'politics', 'cooking recipe'] });
  const results = (out.body as { results: { label: string; probability: number }[] }).results;
  t.same(results.map((r) => r.label), ['sports news', 'politics']);
  t.ok(results.every((r) => r.probability > 0.5));
});

t.test('classify-tree descends into the winner', async (t) => {
  const tree = {
    order: { description: 'orders and deliveries', labels: { damaged: 'arrived broken', late: 'delivery is late' } },
    account: { description: 'the customer account', labels: { login: 'cannot sign in', privacy: 'personal data' } },
  };
  const out = await s.classifyTree.run({ text: 'My parcel arrived with the screen smashed to pieces.', tree });
  const r = out.body as { path: string[]; levels: { input_tokens: number }[] };
  t.same(r.path, ['order', 'damaged']);
  t.equal(out.inputTokens, r.levels[0]!.input_tokens + r.levels[1]!.input_tokens);
});

t.test('rate puts clear texts at the ends of the scale', async (t) => {
  const scale = ['very bad', 'bad', 'average', 'good', 'excellent'];
  const out = await s.rate.run({ texts: ['Awful. Cold food, rude staff, never again.', 'Perfect in every way, the best meal of my life.'], scale });
  const [low, high] = (out.body as { results: { level: number; score: number }[] }).results;
  t.ok(low!.level <= 1, `low level ${low!.level}`);
  t.ok(high!.level >= 3, `high level ${high!.level}`);
  t.ok(high!.score > low!.score);
});
