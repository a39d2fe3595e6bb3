// The token window the hosted SDK reads as usage.rate_limit: x-ratelimit-*-tokens on every answer
// of a key, counted after each answer; a spent window is refused with 429 rate_limit_exceeded.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-tokens-'));
const server = await startGatedServer({
  auth: 'on',
  databaseUrl: join(dir, 'service.db'),
  rateLimit: 100,
  tokenLimit: 300,
});
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

t.test('tokens are counted after each answer; a spent minute is refused until it resets', async (t) => {
  const { key } = await issueKey(server.access.store, 'test', 'tokens');
  const init = { headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } };
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const first = await post(url, { text: 'Sam paid.', statement: 'It was paid [true]' }, init);
  t.equal(first.status, 200);
  const used = Number(first.headers.get('x-input-tokens'));
  t.equal(first.headers.get('x-ratelimit-limit-tokens'), '300');
  t.equal(first.headers.get('x-ratelimit-remaining-tokens'), String(Math.max(0, 300 - used)));
  t.match(first.headers.get('x-ratelimit-reset-tokens'), /^\d+s$/);
  t.ok(first.headers.get('x-ratelimit-remaining-requests'), 'with the request headers: all six');
  let last = first;
  for (let i = 0; i < 20 && last.status === 200; i++)
    last = await post(url, { text: 'Sam paid.', statement: 'It was paid [true]' }, init);
  t.equal(last.status, 429);
  t.equal(last.json.error.code, 'rate_limit_exceeded');
  t.ok(Number(last.headers.get('retry-after')) > 0);
  t.equal(last.headers.get('x-ratelimit-remaining-tokens'), '0');
});
