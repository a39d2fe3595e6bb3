// kill -9 under load: the SQLite store survives intact, the restarted service serves the same
// keys, and the ledger holds every answer a client received (plus at most the calls that were
// in flight at the kill, whose row was written but whose answer never left).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { issueKey } from '../../src/auth/keys.js';
import { openStore } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-crash-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const env = {
  ...process.env,
  DM_AUTH: 'on',
  DM_DATABASE_URL: join(dir, 'service.db'),
  DM_JOURNAL_DIR: join(dir, 'journal'),
  DM_RATE_LIMIT: '0',
};
const child = fileURLToPath(new URL('../helpers/gated-child.js', import.meta.url));

function start() {
  const proc = spawn(process.execPath, [child], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise<string>((resolve) => proc.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { proc, url };
}

t.test('kill -9 under load', async (t) => {
  const store = await openStore(env.DM_DATABASE_URL);
  const { key, record } = await issueKey(store, 'prod', 'crash');
  await store.close();

  const first = start();
  const url = await first.url;
  let delivered = 0;
  let tokens = 0;
  let sent = 0;
  const clients = Array.from({ length: 16 }, async () => {
    while (first.proc.exitCode === null && first.proc.signalCode === null) {
      sent++;
      const res = await fetch(`${url}/v1/decision-machine-1/yes-no`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: '{"text":"a","statement":"b"}',
      }).catch(() => undefined);
      if (res?.status === 200) {
        await res.arrayBuffer();
        delivered++;
        tokens += Number(res.headers.get('x-input-tokens'));
      }
      // Killed after a count, not a time: a slow CI machine still kills a loaded service.
      if (delivered >= 64 && first.proc.signalCode === null) first.proc.kill('SIGKILL');
    }
  });
  await Promise.all(clients);
  t.equal(first.proc.signalCode, 'SIGKILL');

  const db = new Database(env.DM_DATABASE_URL);
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'no corrupt store');
  const ledger = db
    .prepare('SELECT COUNT(*) AS n, SUM(input_tokens) AS tokens FROM usage WHERE key_id = ?')
    .get(record.id) as { n: number; tokens: number };
  db.close();
  t.comment(
    `kill -9 after ${sent} calls: ${delivered} answers delivered, ${ledger.n} ledger rows (${ledger.n - delivered} written for calls in flight at the kill)`,
  );
  t.ok(delivered >= 64, 'the service was under load');
  t.ok(ledger.n >= delivered, 'every delivered answer is in the ledger');
  t.ok(ledger.n - delivered <= 16, 'and at most the calls in flight beyond them');
  t.ok(ledger.tokens >= tokens);

  const second = start();
  t.teardown(() => second.proc.kill('SIGKILL'));
  const res = await fetch(`${await second.url}/v1/decision-machine-1/yes-no`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: '{"text":"a","statement":"b"}',
  });
  t.equal(res.status, 200, 'the restarted service accepts the same key');
});
