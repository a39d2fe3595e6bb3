// Another Node program can use the engine as a library: the example runs and prints decisions.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { testModelPath } from './helpers/model.js';
import { open, ServiceError } from '../src/index.js';
import { fakeBinding } from './helpers/fake-binding.js';
import { post, startServer } from './helpers/server.js';

t.test('examples/embed runs the engine without the HTTP server', async (t) => {
  const example = fileURLToPath(new URL('../examples/embed.js', import.meta.url));
  const env = { ...process.env, DM_MODEL_PATH: await testModelPath() };
  const { stdout } = await promisify(execFile)(process.execPath, [example], { env, timeout: 120_000 });
  const out = JSON.parse(stdout) as { results: { statement: string; answer: boolean; probability: number }[] };
  t.same(
    out.results.map((r) => r.statement),
    ['The order has been sent.', 'The order has already been delivered.'],
  );
  t.same(
    out.results.map((r) => r.answer),
    [true, false],
  );
});

t.test('open() without audio loads no whisper model and offers no transcribe', async (t) => {
  const dm = await open({ slots: 1, modelPath: await testModelPath(), encoder: 'none' });
  t.teardown(() => dm.close());
  t.equal(dm.transcribe, undefined);
  const verdict = (await dm.yesNo({ text: 'The parcel arrived on Monday.', statement: 'The parcel arrived.' })) as {
    answer: boolean;
  };
  t.equal(verdict.answer, true, 'decisions work without audio');
});

t.test('the library refuses what HTTP refuses, with the same error', async (t) => {
  const dm = await open({ slots: 1, modelPath: await testModelPath(), encoder: 'none' });
  t.teardown(() => dm.close());
  const server = await startServer(fakeBinding(), { modelPath: 'fake' });
  t.teardown(server.close);
  const deep = (levels: number): Record<string, unknown> =>
    levels === 1 ? { a: 'a', b: 'b' } : { a: { labels: deep(levels - 1) }, b: 'b' };
  const cases: [string, string, (input: never) => Promise<unknown>, unknown][] = [
    ['classify-tree too deep', 'classify-tree', dm.classifyTree, { text: 'x', tree: deep(9) }],
    [
      'texts x statements over the limit',
      'yes-no',
      dm.yesNo,
      { texts: Array(9).fill('x'), statements: Array(32).fill('y') },
    ],
    ['an unknown field', 'rate', dm.rate, { text: 'x', scale: ['a', 'b'], colour: 'red' }],
    ['a lone surrogate', 'classify', dm.classify, { text: 'x\ud800', labels: ['a', 'b'] }],
  ];
  for (const [what, name, call, input] of cases) {
    const http = await post(`${server.url}/v1/decision-machine-1/${name}`, input);
    t.equal(http.status, 400, `${what}: HTTP 400`);
    const refused = await call(input as never).then(
      () => undefined,
      (err: unknown) => err,
    );
    t.ok(refused instanceof ServiceError, `${what}: the library throws a ServiceError`);
    t.same((refused as ServiceError).toJSON(), http.json, `${what}: the same code and message`);
  }
});
