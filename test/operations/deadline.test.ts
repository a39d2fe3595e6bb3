// Per-request deadlines over HTTP, against the fake binding: the configured ceiling, the
// x-request-timeout-ms header that can only lower it, 504 timeout in the envelope, the jobs
// cancelled and their slots freed.
import t from 'tap';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';
import { startGatedServer } from '../helpers/gated-server.js';

const body = { text: 'The vote was postponed.', statement: 'The vote happened [true]' };

t.test('past the header deadline: 504 timeout at once, the jobs cancelled, the slot free', async (t) => {
  const binding = fakeBinding({ delayMs: 10_000 });
  const server = await startServer(binding, { modelPath: 'fake', slots: 1, queue: 1 });
  t.teardown(server.close);
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const started = performance.now();
  const res = await post(url, body, { headers: { 'x-request-timeout-ms': '300' } });
  const ms = performance.now() - started;
  t.equal(res.status, 504);
  t.same(res.json, {
    error: { code: 'timeout', message: 'request: not answered within its deadline of 300 ms; its work was cancelled' },
  });
  t.equal(res.headers.get('x-should-retry'), 'false');
  t.ok(ms >= 290 && ms < 600, `answered at the deadline (${Math.round(ms)} ms)`);
  t.equal(binding.running(), 0, 'its job was cancelled');
  t.equal(binding.cancelled, 1);
  await new Promise((r) => setImmediate(r));
  t.equal(server.engine.stats().inflight, 0, 'the admission is given back');
});

t.test('the configured ceiling applies without the header, and a larger header cannot raise it', async (t) => {
  const binding = fakeBinding({ delayMs: 10_000 });
  const server = await startServer(binding, { modelPath: 'fake', requestTimeoutMs: 200 });
  t.teardown(server.close);
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const plain = await post(url, body);
  t.equal(plain.status, 504);
  t.match(plain.json.error.message, /deadline of 200 ms/);
  const raised = await post(url, body, { headers: { 'x-request-timeout-ms': '60000' } });
  t.equal(raised.status, 504);
  t.match(raised.json.error.message, /deadline of 200 ms/, 'the header only lowers it');
});

t.test('a request answered in time is unaffected', async (t) => {
  const server = await startServer(fakeBinding({ delayMs: 20 }), { modelPath: 'fake' });
  t.teardown(server.close);
  const res = await post(`${server.url}/v1/decision-machine-1/yes-no`, body, {
    headers: { 'x-request-timeout-ms': '5000' },
  });
  t.equal(res.status, 200);
  t.equal(res.json.answer, true);
});

t.test('a malformed header is a 400 naming it; nothing runs', async (t) => {
  const binding = fakeBinding({ delayMs: 20 });
  const server = await startServer(binding, { modelPath: 'fake' });
  t.teardown(server.close);
  for (const bad of ['0', '-5', '1.5', 'soon', '99999999999999', '']) {
    const res = await post(`${server.url}/v1/decision-machine-1/yes-no`, body, {
      headers: { 'x-request-timeout-ms': bad },
    });
    t.equal(res.status, 400, JSON.stringify(bad));
    t.equal(res.json.error.code, 'invalid_request');
    t.match(res.json.error.message, /^x-request-timeout-ms: must be a whole number of milliseconds/);
  }
  t.equal(binding.submitted, 0);
});

t.test('a deadline refusal is counted in /metrics', async (t) => {
  const server = await startGatedServer({ auth: 'off', databaseUrl: ':memory:' }, { delayMs: 10_000 });
  t.teardown(server.close);
  const res = await post(`${server.url}/v1/decision-machine-1/yes-no`, body, {
    headers: { 'x-request-timeout-ms': '100' },
  });
  t.equal(res.status, 504);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.match(metrics, /dm_refusals_total\{reason="deadline"\} 1\n/);
  t.match(metrics, /dm_http_requests_total\{route="\/v1\/decision-machine-1\/yes-no",method="POST",status="504"\} 1\n/);
});
