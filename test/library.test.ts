// Another Node program can use the engine as a library: the example runs and prints decisions.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { testModelPath } from './helpers/model.js';
import { open } from '../src/index.js';

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
