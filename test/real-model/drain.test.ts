// `decision-machine serve` on the real model, as an orchestrator sees it: GET /health answers
// within a second of the process starting while the model still loads (GET /ready and the model
// routes 503), then /ready 200; on SIGTERM with a decision in flight /ready is 503 at once, the
// decision's client gets its 200, its usage row is in the ledger, and the process exits 0.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { longText, testModelPath } from '../helpers/model.js';
import { post } from '../helpers/server.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-drain-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  });
});
const url = `http://127.0.0.1:${port}`;
const database = join(dir, 'service.db');

const get = (path: string) =>
  fetch(url + path)
    .then(async (res) => ({ status: res.status, json: (await res.json().catch(() => undefined)) as any }))
    .catch(() => undefined);

t.test('start, ready, SIGTERM with a decision in flight', async (t) => {
  const started = performance.now();
  const child = spawn('node', [cli, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      DM_MODEL_PATH: await testModelPath(),
      DM_ENCODER: 'none',
      DM_AUDIO: 'off',
      DM_SLOTS: '1',
      DM_CONTEXT: '4096',
      DM_DATABASE_URL: database,
      DM_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => void child.kill('SIGKILL'));

  let health = await get('/health');
  while (health?.status !== 200 && performance.now() - started < 10_000) {
    await new Promise((r) => setTimeout(r, 10));
    health = await get('/health');
  }
  const healthMs = performance.now() - started;
  t.equal(health?.status, 200);
  // Answering before the model has loaded is the contract; how soon is a figure, not a test bound.
  t.comment(`figure: /health 200 ${Math.round(healthMs)} ms after spawn, phase ${health?.json.phase}`);
  t.equal(health?.json.phase, 'loading', '/health answers while the model still loads');
  const notReady = await get('/ready');
  t.equal(notReady?.status, 503);
  t.equal(notReady?.json.error.code, 'not_ready');
  const early = await post(`${url}/v1/decision-machine-1/yes-no`, { text: 'a', statement: 'b' });
  t.equal(early.status, 503, 'a model route answers not_ready while loading');

  while ((await get('/ready'))?.status !== 200) await new Promise((r) => setTimeout(r, 50));
  t.comment(`ready ${Math.round(performance.now() - started)} ms after spawn`);

  const inFlight = post(
    `${url}/v1/decision-machine-1/yes-no`,
    { text: longText(600), statement: 'The vote was postponed.' },
    { headers: { 'x-request-id': 'drain-in-flight' } },
  );
  await new Promise((r) => setTimeout(r, 500));
  child.kill('SIGTERM');
  const signalled = performance.now();
  let ready = await get('/ready');
  while (ready?.status === 200 && performance.now() - signalled < 2000) ready = await get('/ready');
  const readyMs = performance.now() - signalled;
  t.equal(ready?.status, 503, '/ready turns 503 on SIGTERM');
  t.ok(readyMs < 200, `at once (${Math.round(readyMs)} ms)`);
  const refused = await post(`${url}/v1/decision-machine-1/yes-no`, { text: 'a', statement: 'b' });
  t.equal(refused.status, 503, 'new requests are refused during the drain');
  const answered = await inFlight;
  t.equal(answered.status, 200, 'the admitted decision is answered to its client');
  t.equal(answered.json.answer, true);
  t.equal(await exited, 0, 'then the process exits 0');
  t.comment(`figure: /ready 503 ${Math.round(readyMs)} ms after SIGTERM; in-flight decision 200; exit 0`);
  const db = new Database(database, { readonly: true });
  const row = db
    .prepare('SELECT key_id, route, input_tokens FROM usage WHERE request_id = ?')
    .get('drain-in-flight') as { key_id: string; route: string; input_tokens: number } | undefined;
  db.close();
  t.match(row, { key_id: 'public', route: '/v1/decision-machine-1/yes-no' }, 'its usage row is in the ledger');
  t.equal(row?.input_tokens, Number(answered.headers.get('x-input-tokens')));
});
