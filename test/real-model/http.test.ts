// The whole stack on the real model: HTTP -> engine -> native slots and back.
import t from 'tap';
import { post, startServer } from '../helpers/server.js';
import { longText, testModelPath } from '../helpers/model.js';

const server = await startServer(undefined, { modelPath: await testModelPath(), slots: 1, queue: 0 }, 4 * 1024 * 1024);
t.teardown(server.close);
const url = `${server.url}/v1/decision-machine-1/yes-no`;

/** Until the slot runs the request just sent (a long text is ranked by the encoder first). */
async function slotBusy(): Promise<void> {
  const asked = performance.now();
  while (server.engine.stats().running === 0 && performance.now() - asked < 5000)
    await new Promise((r) => setTimeout(r, 5));
}

t.test('a real decision with billing headers', async (t) => {
  const res = await post(url, {
    text: 'The invoice was paid in full on March 3.',
    statement: 'The invoice is unpaid.',
  });
  t.equal(res.status, 200);
  t.equal(res.json.answer, false);
  t.equal(
    res.headers.get('x-input-chars'),
    String('The invoice was paid in full on March 3.'.length + 'The invoice is unpaid.'.length),
  );
  t.ok(Number(res.headers.get('x-input-tokens')) > 20);
});

t.test('with the only slot busy: GET / still answers and a new decision gets 529 at once', async (t) => {
  const busy = post(url, { text: longText(4000), statement: 'The vote happened.' });
  await slotBusy();
  t.equal(server.engine.stats().running, 1);
  let started = performance.now();
  const root = await fetch(`${server.url}/`);
  t.equal(root.status, 200);
  t.ok(performance.now() - started < 200, 'event loop free');
  started = performance.now();
  const refused = await post(url, { text: 'a', statement: 'b' });
  t.equal(refused.status, 529);
  t.equal(refused.json.error.code, 'overloaded');
  t.ok(performance.now() - started < 200, 'refused fast');
  t.equal((await busy).status, 200);
});

t.test('a client that disconnects mid-inference frees the native slot within a second', async (t) => {
  const controller = new AbortController();
  const gone = post(
    url,
    { text: longText(4500), statement: 'The vote happened.' },
    { signal: controller.signal },
  ).catch(() => undefined);
  await slotBusy();
  t.equal(server.engine.stats().running, 1, 'inference running');
  const aborted = performance.now();
  controller.abort();
  await gone;
  while (server.engine.stats().running > 0) await new Promise((r) => setTimeout(r, 10));
  t.ok(performance.now() - aborted < 1000, 'slot free within a second');
  const next = await post(url, { text: 'The door is red.', statement: 'The door is red.' });
  t.equal(next.status, 200, 'and serves the next request');
  t.equal(next.json.answer, true);
});
