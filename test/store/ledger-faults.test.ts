// The fault matrix of the usage ledger, on the real PostgreSQL and Redis the tests start: each
// is stopped, killed -9 and restarted while three clients send yes-no decisions with keys on,
// and the ledger is checked against the answers the clients received: every delivered answer's
// row exactly once, in place soon after the database is back. Also: an unknown key during an
// outage, a start-up while the database is away, and the service killed -9 during an outage.
// OUTAGE_S (default 5) sets how long the database stays away; REVOKE_CACHE_S (default 3) the
// verdict cache of the Redis case (60 is the production default).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { issueKey, mintKey } from '../../src/auth/keys.js';
import { openStore } from '../../src/store/store.js';
import { startGatedServer, type GatedServer } from '../helpers/gated-server.js';
import { startPostgres, startRedis, type RunningServer } from '../helpers/databases.js';

const OUTAGE_S = Number(process.env.OUTAGE_S ?? 5);
const REVOKE_CACHE_S = Number(process.env.REVOKE_CACHE_S ?? 3);
const YES_NO = '/v1/decision-machine-1/yes-no';
const BODY = JSON.stringify({ text: 'The invoice was paid on March 3.', statement: 'The invoice is unpaid.' });
const ENGINE = { delayMs: 50 }; // a fake decision of 50 ms, so three clients send ~50 calls a second

const dir = mkdtempSync(join(tmpdir(), 'dm-faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const postgres = await startPostgres();
t.teardown(postgres.stop);
// One key sends all three clients' calls: no per-key in-flight cap, no rate limit, only the faults.
const SERVICE = { auth: 'on', databaseUrl: postgres.url, rateLimit: 0, keyMaxInflight: 64 } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  id: string;
  tokens: number;
  ms: number;
  /** performance.now() when the answer arrived. */
  at: number;
}

/** Three clients sending decisions with `key` until `running()` turns false. */
async function load(url: () => string, key: string, running: () => boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  await Promise.all(
    [0, 1, 2].map(async () => {
      while (running()) {
        const started = performance.now();
        const res = await fetch(url() + YES_NO, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: BODY,
        }).catch(() => undefined);
        if (!res) {
          await sleep(20); // the service is down (killed): try again
          continue;
        }
        await res.arrayBuffer();
        const at = performance.now();
        answers.push({
          status: res.status,
          id: res.headers.get('x-request-id') ?? '',
          tokens: Number(res.headers.get('x-input-tokens') ?? 0),
          ms: at - started,
          at,
        });
      }
    }),
  );
  return answers;
}

/** The key's ledger rows by request id. */
async function ledger(keyId: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string; n: number }>(
      'SELECT request_id, COUNT(*)::int AS n FROM usage WHERE key_id = $1 GROUP BY request_id',
      [keyId],
    );
    return new Map(rows.map((r) => [r.request_id, r.n]));
  } finally {
    await client.end();
  }
}

/** Delivered answers missing from the ledger, rows written twice, rows of no delivered answer. */
function compare(delivered: Answer[], rows: Map<string, number>) {
  const ids = new Set(delivered.map((a) => a.id));
  return {
    lost: [...ids].filter((id) => !rows.has(id)).length,
    duplicated: [...rows.values()].filter((n) => n > 1).length,
    extra: [...rows.keys()].filter((id) => !ids.has(id)).length,
  };
}

/** Seconds until every delivered answer is in the ledger (polling every 100 ms, at most `limitS`). */
async function untilInPlace(keyId: string, delivered: Answer[], limitS = 30): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitS * 1000) {
    const rows = await ledger(keyId).catch(() => new Map<string, number>());
    if (compare(delivered, rows).lost === 0) break;
    await sleep(100);
  }
  return (performance.now() - started) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function get(url: string, path: string) {
  const res = await fetch(url + path);
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

for (const [fault, signal, awayS] of [
  ['stopped', 'SIGINT', OUTAGE_S],
  ['killed -9', 'SIGKILL', OUTAGE_S],
  ['restarted', 'SIGINT', 0],
] as const) {
  t.test(`PostgreSQL ${fault} under 3 clients: the ledger equals the answers delivered`, async (t) => {
    const server = await startGatedServer(SERVICE, ENGINE);
    t.teardown(server.close);
    const { key, record } = await issueKey(server.access.store, 'prod', 'acme');
    let running = true;
    const answers = load(
      () => server.url,
      key,
      () => running,
    );
    await sleep(3000);
    const away = performance.now();
    await postgres.halt(signal);
    let during: Awaited<ReturnType<typeof get>>[] = [];
    if (awayS > 0) {
      await sleep(1000); // the first row after the stop has found the database away
      during = [await get(server.url, '/'), await get(server.url, '/ready')];
      const unknown = await fetch(server.url + YES_NO, {
        method: 'POST',
        headers: { authorization: `Bearer ${mintKey('prod', 'acme').key}` },
        body: BODY,
      });
      const refusal = (await unknown.json()) as any;
      t.equal(unknown.status, 503, 'an unknown key while the database is away: 503');
      t.equal(refusal.error.code, 'store_unavailable');
      t.equal(unknown.headers.get('retry-after'), '5', 'with Retry-After');
      t.equal(unknown.headers.get('x-should-retry'), 'true');
      await sleep(awayS * 1000 - 1000);
    }
    await postgres.restart();
    const back = performance.now();
    // The journal is replayed when the service says the store is up again.
    while ((await get(server.url, '/')).json.store !== 'up' && performance.now() - back < 30_000) await sleep(50);
    const inPlaceS = (performance.now() - back) / 1000;
    await sleep(2000);
    running = false;
    const all = await answers;
    const delivered = all.filter((a) => a.status === 200);
    await untilInPlace(record.id, delivered);
    const rows = await ledger(record.id);
    const { lost, duplicated, extra } = compare(delivered, rows);
    const outage = all.filter((a) => a.at > away && a.at < back);
    const p50Before = median(all.filter((a) => a.at < away).map((a) => a.ms));
    const p50During = median(outage.filter((a) => a.status === 200).map((a) => a.ms));
    const metrics = await (await fetch(server.url + '/metrics')).text();
    const journalled = Number(/^dm_usage_journalled_total (\d+)/m.exec(metrics)?.[1]);
    const replayed = Number(/^dm_usage_replayed_total (\d+)/m.exec(metrics)?.[1]);
    t.comment(
      `PostgreSQL ${fault} (${((back - away) / 1000).toFixed(1)} s away): ${all.length} calls, ${delivered.length} x 200 ` +
        `(${outage.filter((a) => a.status === 200).length} while away), ${all.length - delivered.length} x 503, ` +
        `${rows.size} ledger rows: ${lost} lost, ` +
        `${duplicated} duplicated, ${extra} extra; all in place ${inPlaceS.toFixed(2)} s after recovery; ` +
        `journalled ${journalled}, replayed ${replayed}; p50 ${p50Before.toFixed(1)} ms before, ${p50During.toFixed(1)} ms while away`,
    );
    // A key verified before the outage keeps working while its verdict is cached (60 s).
    const refused = all.filter((a) => a.status !== 200);
    t.ok(
      refused.every((a) => a.status === 503 && a.at - away > 50_000),
      'every call answered 200 (after a minute away, 503 store_unavailable: the key cannot be checked)',
    );
    t.ok(outage.length > 0, 'answers were delivered while the database was away');
    t.equal(lost, 0, '0 rows lost');
    t.equal(duplicated, 0, '0 rows duplicated');
    t.equal(extra, 0, 'no row without a delivered answer');
    t.ok(inPlaceS <= 10, 'every row in place within 10 s of recovery');
    t.equal(replayed, journalled, 'every journalled row replayed');
    if (awayS > 0) {
      t.equal(during[0]!.json.store, 'degraded', 'GET / says the store is degraded');
      t.equal(during[1]!.status, 200, '/ready stays 200 (answers are still honest)');
      t.ok(journalled > 0);
    }
  });
}

t.test('the service started while PostgreSQL is away: /ready 503 store_unavailable, then 200', async (t) => {
  await postgres.halt('SIGINT');
  const server = await startGatedServer(SERVICE, ENGINE);
  t.teardown(server.close);
  t.equal((await get(server.url, '/health')).status, 200, '/health 200');
  const ready = await get(server.url, '/ready');
  t.equal(ready.status, 503, '/ready 503');
  t.equal(ready.json.error.code, 'store_unavailable');
  t.equal(ready.headers.get('retry-after'), '5');
  const started = performance.now();
  await postgres.restart();
  const up = performance.now();
  while ((await get(server.url, '/ready')).status !== 200 && performance.now() - started < 30_000) await sleep(50);
  t.comment(`/ready 200 ${(performance.now() - up).toFixed(0)} ms after PostgreSQL answered, no restart`);
  t.equal((await get(server.url, '/ready')).status, 200, 'then 200, without a restart');
  const { key } = await issueKey(server.access.store, 'prod', 'acme');
  const res = await fetch(server.url + YES_NO, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: BODY,
  });
  t.equal(res.status, 200, 'and serves keys');
});

t.test('PostgreSQL away, the service killed -9 and restarted (twice, once mid-replay): 0 rows lost', async (t) => {
  const journalDir = join(dir, 'journal');
  const env = {
    ...process.env,
    DM_AUTH: 'on',
    DM_DATABASE_URL: postgres.url,
    DM_JOURNAL_DIR: journalDir,
    DM_RATE_LIMIT: '0',
    DM_KEY_MAX_INFLIGHT: '64',
    DM_LOG_LEVEL: 'silent',
  };
  const child = fileURLToPath(new URL('../helpers/gated-child.js', import.meta.url));
  const start = async () => {
    const proc = spawn(process.execPath, [child], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve) =>
      proc.stdout.once('data', (d: Buffer) => resolve(String(d).trim())),
    );
    return { proc, url };
  };
  const kill = async (proc: ReturnType<typeof spawn>) => {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  const store = await openStore(postgres.url);
  const { key, record } = await issueKey(store, 'prod', 'crash');
  await store.close();

  let service = await start();
  let running = true;
  const answers = load(
    () => service.url,
    key,
    () => running,
  );
  await sleep(2000);
  await postgres.halt('SIGINT');
  await sleep(OUTAGE_S * 1000);
  await kill(service.proc);
  running = false;
  const delivered = (await answers).filter((a) => a.status === 200);
  await postgres.restart();
  // The next process adopts the dead one's journal and replays it; it is killed as soon as it
  // listens (its replay under way or just done), and a third one finishes.
  service = await start();
  await kill(service.proc);
  service = await start();
  t.teardown(() => service.proc.kill('SIGKILL'));
  const inPlaceS = await untilInPlace(record.id, delivered);
  const rows = await ledger(record.id);
  const { lost, duplicated, extra } = compare(delivered, rows);
  t.comment(
    `PostgreSQL away ${OUTAGE_S} s, then kill -9: ${delivered.length} answers delivered, ${rows.size} ledger rows ` +
      `after two restarts: ${lost} lost, ${duplicated} duplicated, ${extra} for calls in flight at the kill; ` +
      `in place ${inPlaceS.toFixed(2)} s after the third start`,
  );
  t.equal(lost, 0, '0 lost after restart');
  t.equal(duplicated, 0, '0 duplicated');
  t.ok(extra <= 3, 'at most the 3 calls in flight at the kill beyond them');
});

t.test('Redis killed -9 and restarted under load: limits per replica, revocation within the cache time', async (t) => {
  const redis: RunningServer = await startRedis();
  t.teardown(redis.stop);
  const options = {
    auth: 'on' as const,
    databaseUrl: postgres.url,
    redisUrl: redis.url,
    rateLimit: 100_000,
    keyMaxInflight: 64,
    keyCacheSeconds: REVOKE_CACHE_S,
  };
  const replicas: GatedServer[] = [await startGatedServer(options, ENGINE), await startGatedServer(options, ENGINE)];
  t.teardown(() => Promise.all(replicas.map((r) => r.close())));
  const { key, record } = await issueKey(replicas[0]!.access.store, 'prod', 'acme');
  const victim = await issueKey(replicas[0]!.access.store, 'prod', 'acme');
  let running = true;
  let turn = 0;
  const answers = load(
    () => replicas[turn++ % 2]!.url,
    key,
    () => running,
  );
  for (const r of replicas)
    await fetch(r.url + YES_NO, { method: 'POST', headers: { authorization: `Bearer ${victim.key}` }, body: BODY });
  await sleep(2000);
  await redis.halt('SIGKILL');
  // While Redis is away the fan-out cannot announce a revocation: each replica's verdict cache does.
  await replicas[0]!.access.store.revokeKey(victim.record.id, new Date().toISOString());
  const revoked = performance.now();
  const pending = new Set(replicas);
  while (pending.size > 0 && performance.now() - revoked < 70_000) {
    for (const r of [...pending]) {
      const res = await fetch(r.url + YES_NO, {
        method: 'POST',
        headers: { authorization: `Bearer ${victim.key}` },
        body: BODY,
      });
      if (res.status === 401) pending.delete(r);
    }
    await sleep(50);
  }
  const revocationS = (performance.now() - revoked) / 1000;
  await redis.restart();
  await sleep(2000);
  running = false;
  const all = await answers;
  const delivered = all.filter((a) => a.status === 200);
  await untilInPlace(record.id, delivered);
  const { lost, duplicated, extra } = compare(delivered, await ledger(record.id));
  const statuses = [...new Set(all.map((a) => a.status))];
  t.comment(
    `Redis killed -9 for ${revocationS.toFixed(1)} s: ${all.length} calls (statuses ${statuses.join(', ')}), ` +
      `ledger ${lost} lost, ${duplicated} duplicated; revocation seen by both replicas after ${revocationS.toFixed(1)} s ` +
      `(${REVOKE_CACHE_S} s verdict cache)`,
  );
  t.same(statuses, [200], 'every call answered (limits counted per replica meanwhile)');
  t.equal(lost + duplicated + extra, 0, 'the ledger equals the answers delivered');
  t.ok(revocationS <= REVOKE_CACHE_S + 1, `revocation within the ${REVOKE_CACHE_S} s verdict cache`);
});
