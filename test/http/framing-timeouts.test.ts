// Connections that stall or go away, over raw sockets through the public front: slowloris
// headers and half-sent bodies are closed by the server after EDGE.idleSeconds while other requests
// keep answering, and a client that disconnects frees its slot at once.
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { startServer } from '../helpers/server.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { EDGE } from '../../src/http/edge.js';

const binding = fakeBinding({ delayMs: 5 });
const server = await startServer(binding, { modelPath: 'fake' });
t.teardown(server.close);
const port = Number(new URL(server.url).port);
const yesNo = (length: number) =>
  `POST /v1/decision-machine-1/yes-no HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

/** Opens a connection, writes `data`, and resolves with the seconds until the server closed it. */
function held(data: string): { socket: Socket; closed: Promise<number> } {
  const started = performance.now();
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.resume(); // read (and drop) what the server says, so its close is seen
  socket.write(data);
  return {
    socket,
    closed: new Promise((resolve) => socket.on('close', () => resolve((performance.now() - started) / 1000))),
  };
}

t.test('100 slowloris and 100 half-sent connections are closed by the server; GET / keeps answering', async (t) => {
  const worstGet = async (ms: number) => {
    let worst = 0;
    for (const until = performance.now() + ms; performance.now() < until;) {
      const started = performance.now();
      t.equal((await fetch(`${server.url}/`)).status, 200);
      worst = Math.max(worst, performance.now() - started);
      await new Promise((r) => setTimeout(r, 250));
    }
    return worst;
  };
  const quiet = await worstGet(2000); // the machine's own noise, the bound below adds to it
  const slow = Array.from({ length: 100 }, () => held('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '));
  const half = Array.from({ length: 100 }, () => held(`${yesNo(100)}{"text":"a",`));
  // One slowloris trickles a byte a second: still closed, the header deadline is not an idle timer.
  const trickle = setInterval(() => slow[0]!.socket.write('a'), 1000);
  t.teardown(() => clearInterval(trickle));
  const worst = await worstGet((EDGE.idleSeconds - 1) * 1000);
  const times = await Promise.all([...slow, ...half].map((c) => c.closed));
  t.ok(Math.min(...times) >= EDGE.idleSeconds - 0.5, `none closed early (first ${Math.min(...times).toFixed(1)} s)`);
  // The deadline is checked every second; a loaded machine runs that timer late.
  t.ok(
    Math.max(...times) <= EDGE.idleSeconds + 5,
    `all closed by ${EDGE.idleSeconds + 5} s (last ${Math.max(...times).toFixed(1)} s)`,
  );
  t.ok(worst < quiet + 500, `GET / answered meanwhile (worst ${worst.toFixed(0)} ms, quiet ${quiet.toFixed(0)} ms)`);
});

t.test('a client that disconnects mid-request frees its slot, and the next request is answered', async (t) => {
  binding.behaviour.delayMs = 5000;
  const body = '{"text":"a","statement":"b"}';
  const clients = [0, 1].map(() => held(yesNo(body.length) + body));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(server.engine.stats().inflight, 2, 'both slots taken');
  const cancelled = binding.cancelled;
  for (const c of clients) c.socket.destroy();
  await new Promise((r) => setTimeout(r, 100));
  t.equal(server.engine.stats().inflight, 0, 'slots free within 100 ms');
  t.ok(binding.cancelled >= cancelled + 2, 'their inference was cancelled');
  binding.behaviour.delayMs = 5;
  const res = await fetch(`${server.url}/v1/decision-machine-1/yes-no`, { method: 'POST', body });
  t.equal(res.status, 200);
});

t.test('a chunked body is read whole', async (t) => {
  const body = '{"text":"a","statement":"b"}';
  const { socket, closed } = held(
    `POST /v1/decision-machine-1/yes-no HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`,
  );
  let out = '';
  socket.on('data', (d) => (out += d));
  await closed;
  t.match(out, /^HTTP\/1\.1 200 /);
  t.match(out, /"answer":/);
});
