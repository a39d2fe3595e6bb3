// Fair admission with keys on: a key over DM_KEY_MAX_INFLIGHT gets 429 with Retry-After while
// another key is still admitted; with keys off there is no per-key cap.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { InflightCap } from '../../src/auth/inflight.js';
import { keyMaxInflight } from '../../src/auth/access.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-inflight-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const body = { text: 'The vote was postponed.', statement: 'The vote happened [true]' };

t.test('one key at its cap gets 429 with Retry-After; another key is admitted', async (t) => {
  const server = await startGatedServer(
    { auth: 'on', databaseUrl: join(dir, 'a.db'), keyMaxInflight: 2, overloadDelayMs: 50 },
    { delayMs: 400 },
    { slots: 2, queue: 2 },
  );
  t.teardown(server.close);
  const a = (await issueKey(server.access.store, 'prod', 'flood')).key;
  const b = (await issueKey(server.access.store, 'prod', 'quiet')).key;
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const as = [1, 2, 3].map(() => post(url, body, { headers: { authorization: `Bearer ${a}` } }));
  await new Promise((r) => setTimeout(r, 50));
  const refused = await as[2]!;
  t.equal(refused.status, 429, 'the third of key A is over its cap of 2');
  t.equal(refused.json.error.code, 'rate_limit_exceeded');
  t.match(refused.json.error.message, /already has 2 requests in flight/);
  t.equal(refused.headers.get('retry-after'), '1');
  t.equal(refused.headers.get('x-should-retry'), 'true');
  const quiet = await post(url, body, { headers: { authorization: `Bearer ${b}` } });
  t.equal(quiet.status, 200, 'key B still gets a place');
  t.same(
    (await Promise.all(as.slice(0, 2))).map((r) => r.status),
    [200, 200],
  );
  const again = await post(url, body, { headers: { authorization: `Bearer ${a}` } });
  t.equal(again.status, 200, 'answered requests give their places back');
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.match(metrics, /dm_refusals_total\{reason="inflight_cap"\} 1\n/);
  t.match(metrics, /dm_refusals_total\{reason="rate_limit"\} 0\n/);
});

t.test('with keys off every caller is one and nothing is capped', async (t) => {
  const server = await startGatedServer(
    { auth: 'off', databaseUrl: join(dir, 'b.db'), keyMaxInflight: 1 },
    { delayMs: 200 },
  );
  t.teardown(server.close);
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const all = await Promise.all([1, 2, 3].map(() => post(url, body)));
  t.same(
    all.map((r) => r.status),
    [200, 200, 200],
  );
});

t.test('the cap counts per key and gives places back once', async (t) => {
  const cap = new InflightCap(1);
  const release = await cap.take('k');
  await t.rejects(cap.take('k'), { code: 'rate_limit_exceeded', refusal: 'inflight_cap' });
  const other = await cap.take('j');
  release();
  release();
  t.equal(cap.of('k'), 0, 'a second release changes nothing');
  other();
  t.equal(cap.of('j'), 0);
});

t.test('DM_KEY_MAX_INFLIGHT=0 is half the slots, at least one', async (t) => {
  t.equal(keyMaxInflight({ keyMaxInflight: 0, slots: 2 }), 1);
  t.equal(keyMaxInflight({ keyMaxInflight: 0, slots: 1 }), 1);
  t.equal(keyMaxInflight({ keyMaxInflight: 0, slots: 8 }), 4);
  t.equal(keyMaxInflight({ keyMaxInflight: 3, slots: 8 }), 3);
});
