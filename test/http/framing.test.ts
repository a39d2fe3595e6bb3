// HTTP/1.1 framing per RFC 9112 over raw sockets, through the public front (src/http/front.ts):
// ambiguous framing is a 400 and a close, pipelined requests are answered in order, HTTP/1.0 is answered.
import t from 'tap';
import { connect } from 'node:net';
import { startServer } from '../helpers/server.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { EDGE } from '../../src/http/edge.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' });
t.teardown(server.close);
const port = Number(new URL(server.url).port);
const body = '{"text":"a","statement":"b"}';
const yesNo = 'POST /v1/decision-machine-1/yes-no HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';

/** Sends `data` on a fresh connection; the status codes of every reply and whether the server closed within `ms`. */
function exchange(data: string, ms = 1000): Promise<{ statuses: number[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    let closed = false;
    const done = () => resolve({ statuses: statusesOf(out), closed });
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, ms);
    socket.write(data);
  });
}

/** The status of each whole reply in a byte stream of replies framed by Content-Length. */
function statusesOf(out: string): number[] {
  const statuses: number[] = [];
  for (let at = 0; at < out.length;) {
    const end = out.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = out.slice(at, end);
    const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
    if (end + 4 + length > out.length) break;
    statuses.push(Number(/^HTTP\/1\.[01] (\d{3}) /.exec(head)?.[1]));
    at = end + 4 + length;
  }
  return statuses;
}

t.test('two different Content-Length headers: 400, and the body is never read as a second request', async (t) => {
  const smuggled = 'GET /v1/models/smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
  const { statuses } = await exchange(
    `${yesNo}Content-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
  );
  t.same(statuses, [400]);
});

t.test('Content-Length with Transfer-Encoding: no request is served', async (t) => {
  const { statuses, closed } = await exchange(
    `${yesNo}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
  t.notOk(statuses.includes(200), 'not served');
  t.ok(closed, 'connection closed');
});

t.test(`${EDGE.maxHeaderFields} header fields are read; one more gets 431 and a close`, async (t) => {
  const headers = (n: number) => Array.from({ length: n }, (_, i) => `X-H${i}: v`).join('\r\n');
  t.same((await exchange(`GET / HTTP/1.1\r\nHost: x\r\n${headers(EDGE.maxHeaderFields - 1)}\r\n\r\n`)).statuses, [200]);
  t.same(await exchange(`GET / HTTP/1.1\r\nHost: x\r\n${headers(EDGE.maxHeaderFields)}\r\n\r\n`), {
    statuses: [431],
    closed: true,
  });
});

// RFC 9112 cases uWebSockets.js 20.30 alone failed (no reply, or a close without one); the front meets them.
const GAPS: [string, string, number[]][] = [
  [
    'conflicting Content-Length closes the connection (RFC 9112 6.3)',
    `${yesNo}Content-Length: 0\r\nContent-Length: 5\r\n\r\nhello`,
    [400],
  ],
  [
    'Content-Length with Transfer-Encoding gets 400 (RFC 9112 6.1)',
    `${yesNo}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    [400],
  ],
  ['obsolete line folding gets 400 (RFC 9112 5.2)', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n', [400]],
  [
    'a GET pipelined after a POST: both answered in order (RFC 9112 9.3.2)',
    `${yesNo}Content-Length: ${body.length}\r\n\r\n${body}GET / HTTP/1.1\r\nHost: x\r\n\r\n`,
    [200, 200],
  ],
  [
    'two pipelined GETs: both answered in order (RFC 9112 9.3.2)',
    'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models/none HTTP/1.1\r\nHost: x\r\n\r\n',
    [200, 404],
  ],
  ['HTTP/1.0 without Host gets a reply', 'GET / HTTP/1.0\r\n\r\n', [200]],
  ['HTTP/1.0 with Host gets a reply', 'GET / HTTP/1.0\r\nHost: x\r\n\r\n', [200]],
  ['HTTP/1.1 without Host gets 400 (RFC 9112 3.2)', 'GET / HTTP/1.1\r\n\r\n', [400]],
  // RFC 9112 2.2: a recipient MAY read a bare LF as a line end; rejecting it is the strict reading.
  ['bare LF line ends get a 400 (RFC 9112 2.2)', 'GET / HTTP/1.1\nHost: x\n\n', [400]],
  [
    '60 header lines get 431',
    `GET / HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 60 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
    [431],
  ],
];
for (const [name, data, expected] of GAPS) {
  t.test(name, async (t) => {
    const { statuses, closed } = await exchange(data);
    t.same(statuses, expected);
    if (expected[0]! >= 400) t.ok(closed, 'connection closed');
  });
}
