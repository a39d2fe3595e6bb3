// What the service tells clients about retrying, as the official openai client acts on it:
// 529 and 502 carry x-should-retry: true (the client's default two retries = the spec's "at
// most three attempts"); 400 and 401 carry x-should-retry: false (one attempt).
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { EXAMPLES } from '../helpers/examples.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-retry-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const chatBody = EXAMPLES['/v1/chat/completions'] as OpenAI.ChatCompletionCreateParamsNonStreaming;

async function setUp(t: Test, behaviour: { delayMs?: number; failures?: number }) {
  // One key fills the slots here: no per-key in-flight cap (test/operations/inflight.test.ts has it).
  const config = { auth: 'on', databaseUrl: join(dir, `${Math.random()}.db`), keyMaxInflight: 1024 } as const;
  const server = await startGatedServer(config, behaviour, { queue: 0 });
  t.teardown(server.close);
  const { key } = await issueKey(server.access.store, 'test', 'retry');
  const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1` }); // default maxRetries: 2
  /** Chat requests answered with `status`, from the service's own metrics. */
  const requests = async (status: number) => {
    const line = (await server.access.metrics.text())
      .split('\n')
      .find(
        (l) =>
          l.startsWith('dm_http_requests_total{') &&
          l.includes('route="/v1/chat/completions"') &&
          l.includes(`status="${status}"`),
      );
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { server, key, client, requests };
}

t.test('529 overloaded: the client retries, three attempts in all', async (t) => {
  const { server, key, client, requests } = await setUp(t, { delayMs: 8000 });
  // Both slots busy with slow calls (capacity = slots + queue 0).
  const busy = new AbortController();
  const hogs = [0, 1].map(() =>
    fetch(`${server.url}/v1/decision-machine-1/rate`, {
      method: 'POST',
      signal: busy.signal,
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify(EXAMPLES['/v1/decision-machine-1/rate']),
    }).catch(() => undefined),
  );
  await new Promise((r) => setTimeout(r, 100));
  const error = await client.chat.completions.create(chatBody).catch((e: unknown) => e);
  busy.abort();
  await Promise.all(hogs);
  t.ok(error instanceof OpenAI.APIError && error.status === 529, '529 in the end');
  t.equal(await requests(529), 3, 'three attempts');
});

t.test('502 runner_error: retried by the client; each attempt already retried once inside', async (t) => {
  const { server, client, requests } = await setUp(t, { failures: 1000 });
  const error = await client.chat.completions.create(chatBody).catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.APIError && error.status === 502);
  t.equal(await requests(502), 3, 'three attempts');
  t.equal(server.binding.submitted, 6, 'two inference attempts in each of the three requests');
});

t.test('400 and 401: one attempt, x-should-retry: false', async (t) => {
  const { server, requests } = await setUp(t, {});
  const bad = await new OpenAI({ apiKey: 'x', baseURL: `${server.url}/v1` }).chat.completions
    .create(chatBody)
    .catch((e: unknown) => e);
  t.ok(bad instanceof OpenAI.AuthenticationError, '401 is an AuthenticationError');
  const { key } = await issueKey(server.access.store, 'test', 'retry');
  const plain = await new OpenAI({ apiKey: key, baseURL: `${server.url}/v1` }).chat.completions
    .create({ model: 'decision-machine-1', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.ok(plain instanceof OpenAI.BadRequestError);
  t.equal(await requests(401), 1);
  t.equal(await requests(400), 1);
  const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  t.equal(res.headers.get('x-should-retry'), 'false');
});
