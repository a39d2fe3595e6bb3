// llama.cpp's own log reaches stderr as JSON lines shaped like the service's (src/log.ts), at the
// threshold TypeScript sets. Each case runs in a child process, so stderr is the addon's alone.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { SMALL_LOAD } from '../helpers/model.js';

const binding = new URL('../../src/binding.js', import.meta.url).href;

/** The stderr of a process that sets `level` and fails to load a model file that does not exist. */
function stderrOfFailedLoad(level: string): string {
  const script = `
    const { loadBinding } = await import(${JSON.stringify(binding)});
    const engine = new (loadBinding(${JSON.stringify(level)}).Engine)();
    const options = ${JSON.stringify({ modelPath: '/nonexistent/model.gguf', ...SMALL_LOAD })};
    await engine.load(options).catch((err) => { if (err.code !== 'load_failed') throw err; });`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (child.status !== 0) throw new Error(`child exited with ${child.status}: ${child.stderr}`);
  return child.stderr;
}

t.test('native log lines are JSON with time, level, msg and source', async (t) => {
  const stderr = stderrOfFailedLoad('info');
  const lines = stderr.split('\n').filter((l) => l.length > 0);
  t.ok(lines.length > 0, 'llama.cpp logged the failed load');
  for (const line of lines) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    t.match(entry, {
      time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      level: /^(debug|info|warn|error)$/,
      msg: String,
      source: 'llama.cpp',
    });
  }
  t.ok(
    lines.some((l) => (JSON.parse(l) as { level: string }).level === 'error'),
    'the failure itself is an error line',
  );
});

t.test('silent prints nothing; error prints the errors alone', async (t) => {
  t.equal(stderrOfFailedLoad('silent'), '');
  const errors = stderrOfFailedLoad('error')
    .split('\n')
    .filter((l) => l.length > 0);
  t.ok(errors.length > 0);
  t.ok(errors.every((l) => (JSON.parse(l) as { level: string }).level === 'error'));
});
