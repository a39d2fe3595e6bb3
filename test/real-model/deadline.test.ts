// The per-request deadline on the real model: a decision that needs several seconds, sent with
// x-request-timeout-ms: 1000, gets 504 timeout at its deadline, its job stops and the slot takes
// the next request.
import t from 'tap';
import { post, startServer } from '../helpers/server.js';
import { longText, testModelPath } from '../helpers/model.js';

const server = await startServer(undefined, { modelPath: await testModelPath(), slots: 1, queue: 1 }, 4 * 1024 * 1024);
t.teardown(server.close);
const url = `${server.url}/v1/decision-machine-1/yes-no`;

t.test('504 at the deadline, the slot free again at once', async (t) => {
  const started = performance.now();
  const res = await post(
    url,
    { text: longText(3000), statement: 'The vote happened.' },
    { headers: { 'x-request-timeout-ms': '1000' } },
  );
  const answeredMs = performance.now() - started;
  t.equal(res.status, 504);
  t.equal(res.json.error.code, 'timeout');
  // The target is 1.2 s from the client's side; a shared machine's scheduler gets 300 ms of slack.
  t.ok(answeredMs < 1500, `504 at the deadline (${Math.round(answeredMs)} ms)`);
  const answered = performance.now();
  while (server.engine.stats().running > 0 && performance.now() - answered < 5000)
    await new Promise((r) => setTimeout(r, 2));
  const freeMs = performance.now() - answered;
  t.equal(server.engine.stats().running, 0, 'the job stopped');
  t.ok(freeMs < 500, `slot free ${Math.round(freeMs)} ms after the 504`);
  t.comment(`figure: 504 after ${Math.round(answeredMs)} ms; slot free ${Math.round(freeMs)} ms after it`);
  const next = await post(url, {
    text: 'The invoice was paid in full on March 3.',
    statement: 'The invoice is unpaid.',
  });
  t.equal(next.status, 200, 'the slot serves the next request');
  t.equal(next.json.answer, false);
  t.equal(server.engine.stats().inflight, 0);
});
