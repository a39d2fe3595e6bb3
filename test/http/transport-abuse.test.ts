// Hostile HTTP over raw sockets, with key checking on: bodies over the cap (declared and
// chunked), 100,000-deep JSON, wrong content types, invalid UTF-8 in bodies, paths and headers,
// truncated uploads, garbage request lines, oversized headers. Every answer must be below 500,
// and the service must still answer afterwards.
import t from 'tap';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { startGatedServer } from '../helpers/gated-server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-hostile-'));
const server = await startGatedServer({
  auth: 'on',
  databaseUrl: join(dir, 'service.db'),
  rateLimit: 100_000,
  maxBodyBytes: 1 << 20,
});
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
const { key } = await issueKey(server.access.store, 'test', 'hostile');
const port = Number(new URL(server.url).port);

/** Sends raw bytes; resolves with the status of the first response (0 if the server only closed). */
function raw(bytes: Buffer | string, closeAfterMs = 3000): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0));
    };
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (/\r\n\r\n/.test(got)) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.setTimeout(closeAfterMs, done);
    socket.write(bytes);
  });
}

const request = (path: string, body: Buffer | string, headers: Record<string, string> = {}, method = 'POST') => {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'host: 127.0.0.1',
    `authorization: Bearer ${key}`,
    `content-length: ${b.length}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b]);
};

const yesNo = '/v1/decision-machine-1/yes-no';
const chat = '/v1/chat/completions';
const deepArray = '['.repeat(100_000) + ']'.repeat(100_000);
const deepObject = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);

const cases: [string, Buffer | string][] = [
  ['body over the cap, declared', request(yesNo, Buffer.alloc(2 << 20, 0x61))],
  [
    'body over the cap, chunked',
    Buffer.concat([
      Buffer.from(
        `POST ${yesNo} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ntransfer-encoding: chunked\r\n\r\n`,
      ),
      ...Array.from({ length: 40 }, () => Buffer.from(`10000\r\n${'a'.repeat(0x10000)}\r\n`)),
      Buffer.from('0\r\n\r\n'),
    ]),
  ],
  ['100k-deep JSON array', request(yesNo, deepArray)],
  ['100k-deep JSON object', request(yesNo, deepObject)],
  ['100k-deep JSON on chat', request(chat, deepArray)],
  ['100k-deep JSON in a field', request(yesNo, `{"text":"a","statement":${deepArray}}`)],
  ['text/plain body', request(yesNo, 'hello there', { 'content-type': 'text/plain' })],
  [
    'multipart body',
    request(yesNo, '--x\r\ncontent-disposition: form-data; name="text"\r\n\r\nhi\r\n--x--', {
      'content-type': 'multipart/form-data; boundary=x',
    }),
  ],
  ['XML body', request(chat, '<messages><m>hi</m></messages>', { 'content-type': 'application/xml' })],
  ['form body', request(yesNo, 'text=hi&statement=yo', { 'content-type': 'application/x-www-form-urlencoded' })],
  ['JSON under an audio content type', request(yesNo, '{"text":"a","statement":"b"}', { 'content-type': 'audio/wav' })],
  [
    'invalid UTF-8 body',
    request(yesNo, Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d])),
  ],
  [
    'overlong UTF-8 encoding',
    request(
      yesNo,
      Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('","statement":"s"}')]),
    ),
  ],
  ['invalid UTF-8 on chat', request(chat, Buffer.from([0x7b, 0xff, 0xfe, 0xfd, 0x7d]))],
  ['lone surrogates', request(yesNo, '{"text":"\\udc00\\ud800","statement":"s"}')],
  ['NUL bytes', request(yesNo, '{"text":"a\\u0000b","statement":"\u0000"}')],
  [
    'invalid UTF-8 in the path',
    Buffer.concat([
      Buffer.from('POST /v1/decision-machine-1/yes-no'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(` HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}`),
    ]),
  ],
  [
    'invalid UTF-8 in the key',
    Buffer.concat([
      Buffer.from(`POST ${yesNo} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer test_sk-a-`),
      Buffer.from([0xff, 0xc3, 0x28]),
      Buffer.from('\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}'),
    ]),
  ],
  ['a 16 KB bearer key', request(yesNo, '{}', { authorization: `Bearer ${'k'.repeat(16_384)}` })],
  ['percent-encoded garbage model id', request('/v1/models/%ff%fe%00', '', {}, 'GET')],
  [
    'truncated upload',
    Buffer.from(
      `POST ${yesNo} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-length: 5000\r\n\r\n{"text":`,
    ),
  ],
  ['content-length not a number', Buffer.from(`POST ${yesNo} HTTP/1.1\r\nhost: x\r\ncontent-length: lots\r\n\r\n{}`)],
  ['negative content-length', Buffer.from(`POST ${yesNo} HTTP/1.1\r\nhost: x\r\ncontent-length: -5\r\n\r\n{}`)],
  ['garbage request line', Buffer.from('\x00\x01\x02 NOT HTTP AT ALL\r\n\r\n')],
  ['a 200 KB header', Buffer.from(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(200_000)}\r\n\r\n`)],
  [
    'many headers',
    Buffer.from(
      `GET / HTTP/1.1\r\nhost: x\r\n${Array.from({ length: 500 }, (_, i) => `x-h${i}: v`).join('\r\n')}\r\n\r\n`,
    ),
  ],
  ['HTTP/0.9 style', Buffer.from('GET /\r\n\r\n')],
];

t.test('hostile requests: 0 crashes, 0 5xx', async (t) => {
  const statuses: Record<string, number> = {};
  for (const [name, bytes] of cases) statuses[name] = await raw(bytes, name === 'truncated upload' ? 500 : 3000);
  // 50 clients that disconnect mid-upload, at once.
  await Promise.all(
    Array.from({ length: 50 }, () => raw(request(yesNo, '{"text":"' + 'a'.repeat(100_000)).subarray(0, 60_000), 200)),
  );
  const fivexx = Object.entries(statuses).filter(([, s]) => s >= 500);
  t.comment(`hostile HTTP: ${cases.length + 50} requests, ${fivexx.length} 5xx, statuses ${JSON.stringify(statuses)}`);
  t.same(fivexx, [], '0 5xx');
  t.equal(statuses['body over the cap, declared'], 413);
  t.equal(statuses['body over the cap, chunked'], 413);
  t.equal(statuses['100k-deep JSON array'], 400);
  t.equal(statuses['100k-deep JSON object'], 400);
  t.equal(statuses['invalid UTF-8 body'], 400);
  const alive = await fetch(`${server.url}/`);
  t.equal(alive.status, 200, 'still serving afterwards');
  t.equal(server.engine.stats().inflight, 0, 'nothing left running');
});
