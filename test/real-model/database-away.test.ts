// `decision-machine serve` on the real model started while PostgreSQL is down (keys on): it does
// not crash or wait, /health answers, /ready is 503 store_unavailable once the model is loaded, a
// key cannot be checked (503 store_unavailable, Retry-After); PostgreSQL started, /ready turns 200
// without a restart and a decision's usage row lands in the ledger.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { openStore } from '../../src/store/store.js';
import { freePort, startPostgres } from '../helpers/databases.js';
import { testModelPath } from '../helpers/model.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-database-away-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const postgres = await startPostgres();
t.teardown(postgres.stop);
const store = await openStore(postgres.url);
t.teardown(() => store.close());
const { key, record } = await issueKey(store, 'prod', 'acme');
const url = `http://127.0.0.1:${await freePort()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const get = (path: string) =>
  fetch(url + path)
    .then(async (res) => ({ status: res.status, headers: res.headers, json: (await res.json()) as any }))
    .catch(() => undefined);

t.test('started with PostgreSQL down, then PostgreSQL started', async (t) => {
  await postgres.halt('SIGINT');
  const started = performance.now();
  const child = spawn('node', [cli, 'serve'], {
    env: {
      ...process.env,
      PORT: new URL(url).port,
      DM_MODEL_PATH: await testModelPath(),
      DM_ENCODER: 'none',
      DM_AUDIO: 'off',
      DM_SLOTS: '1',
      DM_AUTH: 'on',
      DM_DATABASE_URL: postgres.url,
      DM_JOURNAL_DIR: join(dir, 'journal'),
      DM_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let health = await get('/health');
  while (health?.json.phase !== 'ready' && child.exitCode === null && performance.now() - started < 120_000) {
    await sleep(100);
    health = await get('/health');
  }
  t.equal(health?.status, 200, '/health 200');
  t.equal(health?.json.phase, 'ready', 'the model loaded with the database away');
  const ready = await get('/ready');
  t.equal(ready?.status, 503, '/ready 503');
  t.equal(ready?.json.error.code, 'store_unavailable');
  const call = () =>
    fetch(url + '/v1/decision-machine-1/yes-no', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'away-then-back' },
      body: JSON.stringify({ text: 'The invoice was paid on March 3.', statement: 'The invoice is unpaid.' }),
    });
  const refused = await call();
  t.equal(refused.status, 503, 'a key that cannot be checked: 503, not 401 or 500');
  t.equal(((await refused.json()) as any).error.code, 'store_unavailable');
  t.equal(refused.headers.get('retry-after'), '5');

  await postgres.restart();
  const back = performance.now();
  while ((await get('/ready'))?.status !== 200 && performance.now() - back < 30_000) await sleep(100);
  const readyMs = performance.now() - back;
  t.comment(`figure: /ready 200 ${Math.round(readyMs)} ms after PostgreSQL answered, no restart`);
  t.equal((await get('/ready'))?.status, 200, '/ready 200 once PostgreSQL answers');
  t.ok(readyMs < 10_000, 'within 10 s (the database is tried every second, the heads every 5 s)');
  t.equal(child.exitCode, null, 'the same process: no restart');
  t.equal((await call()).status, 200, 'the key works');
  const [usage] = (await store.usage()).filter((u) => u.keyId === record.id);
  t.equal(usage?.requests, 1, 'and its usage row is in the ledger');
});
