// /metrics after real traffic (requests by status, latency, slots, 529s, tokens), and the request
// log lines: request id, key id and organization, never the key or the texts.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { createLogger } from '../../src/log.js';
import { startGatedServer } from '../helpers/gated-server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-metrics-'));
const lines: string[] = [];
const server = await startGatedServer(
  // No per-key in-flight cap: one key fills the slots here (test/operations/inflight.test.ts has the cap).
  { auth: 'on', databaseUrl: join(dir, 'service.db'), keyMaxInflight: 1024 },
  { delayMs: 300 },
  { queue: 0 },
  {
    ...createLogger('info'),
    info: (msg, fields) => lines.push(JSON.stringify({ msg, ...fields })),
  },
);
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
const { key, record } = await issueKey(server.access.store, 'prod', 'acme');
const secretText = 'The secret merger with Globex closes on Friday.';
const yesNo = (authorization?: string) =>
  fetch(`${server.url}/v1/decision-machine-1/yes-no`, {
    method: 'POST',
    headers: authorization ? { authorization } : {},
    body: JSON.stringify({ text: secretText, statement: 'It closes [true]' }),
  });

t.test('metrics count what happened', async (t) => {
  t.equal((await yesNo()).status, 401);
  const three = await Promise.all([1, 2, 3].map(() => yesNo(`Bearer ${key}`)));
  t.same(three.map((r) => r.status).sort(), [200, 200, 529], 'two slots, no queue: the third is refused');
  const tokens = three.filter((r) => r.status === 200).reduce((n, r) => n + Number(r.headers.get('x-input-tokens')), 0);
  const res = await fetch(`${server.url}/metrics`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  const text = await res.text();
  const value = (line: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(line))
        ?.split(' ')
        .pop(),
    );
  const route = 'route="/v1/decision-machine-1/yes-no"';
  t.equal(value(`dm_http_requests_total{${route},method="POST",status="200"}`), 2);
  t.equal(value(`dm_http_requests_total{${route},method="POST",status="401"}`), 1);
  t.equal(value(`dm_http_requests_total{${route},method="POST",status="529"}`), 1);
  t.equal(value('dm_overloaded_total'), 1);
  t.equal(value(`dm_input_tokens_total{${route}}`), tokens);
  t.equal(value(`dm_http_request_duration_seconds_count{${route}}`), 4);
  t.equal(value('dm_slots '), 2);
  t.equal(value('dm_slots_busy '), 0);
  t.equal(value('dm_prompt_cache_loads_total '), 0);
  t.equal(value('dm_capacity '), 2);
  t.equal(value('dm_refusals_total{reason="overloaded"}'), 1, 'the 529 counted as a refusal');
  t.equal(value('dm_refusals_total{reason="deadline"}'), 0, 'every reason is listed');
  t.equal(value('dm_slot_wait_seconds_count '), 2, 'one slot wait per job run');
  t.ok(value('dm_slot_wait_seconds_sum ') < 0.2, 'the two jobs found a free slot');
});

t.test('request logs: ids, key id and organization; no key, no text', async (t) => {
  const requests = lines.filter((l) => l.includes('"msg":"request"'));
  t.ok(requests.length >= 4);
  const billed = requests.map((l) => JSON.parse(l)).find((l) => l.status === 200);
  t.match(billed, { id: String, key: record.id, org: 'acme', path: '/v1/decision-machine-1/yes-no' });
  const all = lines.join('\n');
  t.notOk(all.includes(key), 'the key never appears');
  t.notOk(all.includes(key.slice(13, 30)), 'nor any of its secret');
  t.notOk(all.includes('Globex'), 'nor the texts');
});
