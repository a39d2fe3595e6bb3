// Two replicas sharing real PostgreSQL (keys, usage) and Redis (rate counters, revocation
// fan-out): a revocation reaches both, the per-key limit holds across them, and the usage
// ledger equals the sum of the x-input-tokens the clients received.
import t from 'tap';
import { issueKey } from '../../src/auth/keys.js';
import { keysCommand } from '../../src/cli/keys.js';
import { startGatedServer, type GatedServer } from '../helpers/gated-server.js';
import { startPostgres, startRedis } from '../helpers/databases.js';
import { EXAMPLES } from '../helpers/examples.js';

const postgres = await startPostgres();
t.teardown(postgres.stop);
const redis = await startRedis();
t.teardown(redis.stop);

const yesNo = '/v1/decision-machine-1/yes-no';
const call = (server: GatedServer, key: string, body: unknown = EXAMPLES[yesNo]) =>
  fetch(server.url + yesNo, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Milliseconds until every replica refuses the key (polling every 10 ms, at most 70 s). */
async function untilRefusedEverywhere(replicas: GatedServer[], key: string): Promise<number> {
  const started = performance.now();
  const pending = new Set(replicas);
  while (pending.size > 0 && performance.now() - started < 70_000) {
    for (const r of [...pending]) if ((await call(r, key)).status === 401) pending.delete(r);
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

t.test('revocation through the operator CLI reaches both replicas at once (Redis fan-out)', async (t) => {
  const replicas = [
    await startGatedServer({ auth: 'on', databaseUrl: postgres.url, redisUrl: redis.url }),
    await startGatedServer({ auth: 'on', databaseUrl: postgres.url, redisUrl: redis.url }),
  ];
  t.teardown(() => Promise.all(replicas.map((r) => r.close())));
  const { key, record } = await issueKey(replicas[0]!.access.store, 'prod', 'acme');
  for (const r of replicas) t.equal((await call(r, key)).status, 200, 'accepted and cached (60 s verdicts)');
  process.env.DM_DATABASE_URL = postgres.url;
  process.env.DM_REDIS_URL = redis.url;
  t.teardown(() => {
    delete process.env.DM_DATABASE_URL;
    delete process.env.DM_REDIS_URL;
  });
  t.equal(await keysCommand(['revoke', record.id]), 0);
  const ms = await untilRefusedEverywhere(replicas, key);
  t.comment(`revocation seen by 2 replicas after ${ms.toFixed(0)} ms (fan-out)`);
  t.ok(ms < 1000, 'well within 60 s');
});

t.test('without the fan-out, the verdict cache bounds it: both replicas refuse within the cache time', async (t) => {
  const replicas = [
    await startGatedServer({ auth: 'on', databaseUrl: postgres.url, keyCacheSeconds: 2 }),
    await startGatedServer({ auth: 'on', databaseUrl: postgres.url, keyCacheSeconds: 2 }),
  ];
  t.teardown(() => Promise.all(replicas.map((r) => r.close())));
  const { key, record } = await issueKey(replicas[0]!.access.store, 'prod', 'acme');
  for (const r of replicas) t.equal((await call(r, key)).status, 200);
  await replicas[0]!.access.store.revokeKey(record.id, new Date().toISOString());
  t.equal((await call(replicas[1]!, key)).status, 200, 'still cached right after the revocation');
  const ms = await untilRefusedEverywhere(replicas, key);
  t.comment(`revocation seen by 2 replicas after ${ms.toFixed(0)} ms (2 s verdict cache, no fan-out)`);
  t.ok(ms <= 2100, 'within the cache time');
});

t.test('the per-key limit holds across two replicas; the ledger equals the tokens served', async (t) => {
  // Stay inside one minute window (windows are aligned to the minute on Redis's clock).
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
  const limit = 20;
  const replicas = [0, 1].map(() =>
    startGatedServer(
      // 40 calls of one key at once: no per-key in-flight cap, only the rate limit under test.
      { auth: 'on', databaseUrl: postgres.url, redisUrl: redis.url, rateLimit: limit, keyMaxInflight: 1024 },
      {},
      { queue: 64 },
    ),
  );
  const [a, b] = await Promise.all(replicas);
  t.teardown(() => Promise.all([a!.close(), b!.close()]));
  const { key, record } = await issueKey(a!.access.store, 'prod', 'initech');
  // 40 concurrent calls costing 1 to 4 (one per item of texts, statements or questions).
  const bodies = Array.from({ length: 40 }, (_, i) => {
    const n = (i % 4) + 1;
    return i % 2 === 0
      ? { text: 'The parcel arrived.', statements: Array(n).fill('It arrived [true]') }
      : { texts: Array(n).fill('The parcel arrived.'), statement: 'It arrived' };
  });
  const results = await Promise.all(
    bodies.map(async (body, i) => {
      const res = await call(i % 2 === 0 ? a! : b!, key, body);
      return {
        status: res.status,
        cost: (i % 4) + 1,
        tokens: Number(res.headers.get('x-input-tokens') ?? 0),
        headers: res.headers,
        json: (await res.json()) as any,
      };
    }),
  );
  const admitted = results.filter((r) => r.status !== 429);
  const used = admitted.reduce((n, r) => n + r.cost, 0);
  t.comment(
    `limit ${limit}/min over 2 replicas: ${admitted.length} of 40 calls admitted, ${used} requests counted, ${40 - admitted.length} refused with 429`,
  );
  t.ok(used <= limit, `never above the limit (${used} <= ${limit})`);
  t.ok(used > limit - 4, 'and the limit is used up');
  t.ok(admitted.every((r) => r.status === 200));
  const refused = results.find((r) => r.status === 429)!;
  t.equal(refused.json.error.code, 'rate_limit_exceeded');
  t.match(refused.json.error.message, /rate limit of 20 requests per minute reached/);
  t.ok(
    Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 60,
    'Retry-After in seconds',
  );
  t.equal(refused.headers.get('x-should-retry'), 'true');

  const served = admitted.reduce((n, r) => n + r.tokens, 0);
  const ledger = (await a!.access.store.usage()).filter((u) => u.keyId === record.id);
  t.equal(ledger.length, 1);
  t.equal(ledger[0]!.requests, admitted.length, 'one ledger row per successful call');
  t.equal(ledger[0]!.inputTokens, served, `ledger ${ledger[0]!.inputTokens} tokens = sum of x-input-tokens ${served}`);
  t.equal(ledger[0]!.organization, 'initech');
});

t.test('Redis going away: no 5xx, each replica keeps counting on its own', async (t) => {
  const own = await startRedis();
  const server = await startGatedServer({ auth: 'on', databaseUrl: postgres.url, redisUrl: own.url, rateLimit: 3 });
  t.teardown(server.close);
  const { key } = await issueKey(server.access.store, 'prod', 'umbrella');
  t.equal((await call(server, key)).status, 200, 'counted in Redis');
  await own.stop();
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await call(server, key, { text: 'a', statement: 'b' })).status);
  t.same(statuses, [200, 200, 200, 429, 429], 'the in-process count takes over: the limit still holds on this replica');
});
