// `decision-machine serve` on the real model, killed -9 twice: first while corrections wait to be
// read (they stay stored, unread), then in the middle of the online refit that reads them. After
// each restart the previous head serves (the same version, nothing half-written, the store intact),
// and the refit starts again once its lease has expired and a correction asks for it.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from '../helpers/databases.js';
import { testModelPath } from '../helpers/model.js';
import { FIRE, SEA } from '../helpers/sea-fire.js';

t.setTimeout(1_200_000);

const LABELS = ['red', 'blue'];

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-refit-crash-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = join(dir, 'service.db');
const url = `http://127.0.0.1:${await freePort()}`;
const modelPath = await testModelPath();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(): Promise<ChildProcess> {
  const child = spawn('node', [cli, 'serve'], {
    env: {
      ...process.env,
      PORT: new URL(url).port,
      DM_MODEL_PATH: modelPath,
      DM_ENCODER: 'none',
      DM_AUDIO: 'off',
      DM_SLOTS: '1',
      DM_DATABASE_URL: database,
      DM_JOURNAL_DIR: join(dir, 'journal'),
      DM_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  const started = performance.now();
  while (performance.now() - started < 180_000 && child.exitCode === null) {
    const ready = await fetch(`${url}/ready`).catch(() => undefined);
    if (ready?.status === 200) return child;
    await sleep(200);
  }
  throw new Error('the service did not get ready');
}

const correct = async (text: string, label: string) => {
  const res = await fetch(`${url}/v1/decision-machine-1/feedback`, {
    method: 'POST',
    body: JSON.stringify({ cap: 'classify', req: { text, labels: LABELS }, expect: { label } }),
  });
  if (res.status !== 202) throw new Error(`feedback ${res.status}: ${await res.text()}`);
};
const listed = async () =>
  ((await (await fetch(`${url}/v1/heads`)).json()) as { data: { id: string; examples: number; fitted_at: string }[] })
    .data;
async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 600_000): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(250);
  }
}
const count = (table: string) => {
  const db = new Database(database, { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};
const killed = async (child: ChildProcess) => {
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const db = new Database(database, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
};

t.test('kill -9 during a refit: the previous head serves, nothing half-written, the refit starts again', async (t) => {
  let child = await start();
  for (let i = 0; i < 8; i++) {
    await correct(SEA[i]!, 'red');
    await correct(FIRE[i]!, 'blue');
  }
  const first = await until('the first head', async () => (await listed())[0]);
  t.equal(first.examples, 16, 'fitted on 8 corrections per label');

  // 16 more (the same texts again, corrected the same way), then a kill before they are all read.
  for (let i = 0; i < 8; i++) {
    await correct(`${SEA[i]!} Again.`, 'red');
    await correct(`${FIRE[i]!} Again.`, 'blue');
  }
  t.equal(await killed(child), 'ok', 'the store intact after a kill while corrections are read');
  t.equal(count('corrections'), 32, 'every correction stored');
  t.ok(count('correction_readings') < 32, `some unread (${count('correction_readings')} of 32 read)`);

  // The 33rd correction is due for a refit (twice the head's 16), which reads the unread ones
  // itself: killed in the middle of it, its lease taken.
  child = await start();
  await correct(SEA[8]!, 'red');
  await until('the refit under way (its lease taken)', async () => (count('leases') > 0 ? true : undefined), 120_000);
  t.equal(await killed(child), 'ok', 'the store intact after a kill mid-refit');
  const killedAt = performance.now();
  child = await start();
  const after = await listed();
  t.same(
    after.map((h) => [h.id, h.examples, h.fitted_at]),
    [[first.id, 16, first.fitted_at]],
    'the previous head serves: same version, no partial row',
  );
  const res = await fetch(`${url}/v1/decision-machine-1/classify`, {
    method: 'POST',
    body: JSON.stringify({ text: SEA[9], labels: LABELS }),
  });
  t.equal(res.headers.get('x-decision-head'), first.id, 'and decides');

  // The dead process's lease expires within 30 s; the next correction past the threshold refits.
  await sleep(Math.max(0, 31_000 - (performance.now() - killedAt)));
  await correct(FIRE[8]!, 'blue');
  const refitted = await until('the refit after the restart', async () =>
    (await listed()).find((h) => h.examples === 34),
  );
  t.not(refitted.fitted_at, first.fitted_at, 'a new version from all 34 corrections');
  t.equal(count('correction_readings'), 34, 'every correction read once it is done');
  t.equal(refitted.id, first.id);
  child.kill('SIGKILL');
});
