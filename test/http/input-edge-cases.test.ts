// The smaller holes the abuse run (abuse-latency.test.ts) found, each as a user would see it.
import t from 'tap';
import { checkWavLength } from '../../src/http/wav.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' });
t.teardown(server.close);
const api = `${server.url}/v1/decision-machine-1`;

t.test('prototype names are ordinary property names, in data and nowhere else', async (t) => {
  const schema =
    '{"type":"object","properties":{"__proto__":{"type":"object","properties":{"x":{"type":"string"}}},"constructor":{"type":"object","properties":{"prototype":{"type":"object","properties":{"y":{"type":"string"}}}}}}}';
  const res = await post(`${api}/extract`, `{"text":"Sam Ortiz, 2 adults.","schema":${schema}}`);
  t.equal(res.status, 200);
  t.ok(res.text.includes('"__proto__":{"x":'), 'a top-level __proto__ property is in data');
  t.ok(res.text.includes('"constructor":{"prototype":{"y":'), 'constructor.prototype too');
  t.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype untouched');
  t.equal((Object as unknown as Record<string, unknown>).y, undefined, 'Object untouched');
});

t.test('a lone surrogate in a key is refused, naming where', async (t) => {
  const res = await post(`${api}/classify`, '{"text":"x","labels":{"\\ud800":"x","b":"y"}}');
  t.equal(res.status, 400);
  t.equal(res.json.error.message, 'labels: a key contains a lone surrogate (invalid Unicode)');
});

t.test('model_not_found quotes a long id in part', async (t) => {
  const res = await post(`${server.url}/v1/chat/completions`, {
    model: 'm'.repeat(50_000),
    messages: [{ role: 'user', content: 'x' }],
  });
  const { error } = res.json as { error: { message: string } };
  t.equal(res.status, 404);
  t.ok(error.message.length < 200, `message of ${error.message.length} characters`);
  t.match(error.message, /\(50000 characters\) not found; use "decision-machine-1"$/);
});

t.test('x-request-id: a plain token is kept, anything else replaced', async (t) => {
  const sent = async (id: string) =>
    (await fetch(`${server.url}/`, { headers: { 'x-request-id': id } })).headers.get('x-request-id');
  t.equal(await sent('req-42_a.b:c'), 'req-42_a.b:c');
  for (const bad of ['a b', 'x'.repeat(129), '"quoted"', 'semi;colon'])
    t.match(await sent(bad), /^[0-9a-f-]{36}$/, JSON.stringify(bad).slice(0, 20));
});

t.test('texts x statements over the limit: 400 naming it, at once', async (t) => {
  const started = performance.now();
  const res = await post(`${api}/yes-no`, {
    texts: Array.from({ length: 32 }, (_, i) => `t${i}`),
    statements: Array.from({ length: 32 }, (_, i) => `s${i}`),
  });
  t.equal(res.status, 400);
  t.equal(res.json.error.message, 'body: texts x statements is 1024 decisions, more than the limit of 256 per request');
  t.ok(performance.now() - started < 100, 'refused within 100 ms');
});

t.test('a request reading more than its token budget: 400 naming the limit, before any job', async (t) => {
  // The fake binding's tokens are characters and SMALL's context is 4,096: a budget of 8,192.
  const before = server.engine.stats().completed;
  const res = await post(`${api}/yes-no`, {
    texts: Array.from({ length: 8 }, (_, i) => `${i} ${'word '.repeat(400)}`),
    statement: 'x',
  });
  t.equal(res.status, 400);
  t.match(
    res.json.error.message,
    /^body: the request needs \d+ tokens of model reading, more than the limit of 8192 per request/,
  );
  t.equal(server.engine.stats().completed, before, 'no job ran');
});

t.test('extract schema limits are named', async (t) => {
  const enumOf = (n: number) => ({
    type: 'object',
    properties: { k: { type: 'string', enum: Array.from({ length: n }, (_, i) => `v${i}`) } },
  });
  t.equal(
    (await post(`${api}/extract`, { text: 'x', schema: enumOf(65) })).json.error.message,
    'schema.properties.k.enum: more than 64 values',
  );
  t.equal((await post(`${api}/extract`, { text: 'x', schema: enumOf(64) })).status, 200);
  let deep: Record<string, unknown> = { type: 'object', properties: { leaf: { type: 'string' } } };
  for (let i = 0; i < 9; i++) deep = { type: 'object', properties: { n: deep } };
  t.equal(
    (await post(`${api}/extract`, { text: 'x', schema: deep })).json.error.message,
    'schema: objects nested deeper than 8 levels',
  );
});

t.test('a WAV holding under 90% of its declared data is truncated', async (t) => {
  const wav = (declaredSeconds: number, heldSeconds: number) => {
    const rate = 16000 * 2; // 16 kHz, mono, 16-bit
    const bytes = Buffer.alloc(44 + Math.round(heldSeconds * rate));
    bytes.write('RIFF', 0);
    bytes.writeUInt32LE(36 + declaredSeconds * rate, 4);
    bytes.write('WAVEfmt ', 8);
    bytes.writeUInt32LE(16, 16);
    bytes.writeUInt16LE(1, 20);
    bytes.writeUInt16LE(1, 22);
    bytes.writeUInt32LE(16000, 24);
    bytes.writeUInt32LE(rate, 28);
    bytes.writeUInt16LE(2, 32);
    bytes.writeUInt16LE(16, 34);
    bytes.write('data', 36);
    bytes.writeUInt32LE(declaredSeconds * rate, 40);
    return bytes;
  };
  t.throws(() => checkWavLength(wav(10, 1)), {
    code: 'invalid_request',
    message: 'body: the audio file is truncated: it declares 10.0 s but holds 1.0 s',
  });
  t.doesNotThrow(() => checkWavLength(wav(10, 9.5)), 'within 90% (less half a second)');
  t.doesNotThrow(() => checkWavLength(wav(10, 10)), 'whole');
  const streamed = wav(10, 1);
  streamed.writeUInt32LE(0xffffffff, 40);
  t.doesNotThrow(() => checkWavLength(streamed), 'a streamed WAV declares no length');
  streamed.writeUInt32LE(0x7ffff000, 40);
  t.doesNotThrow(() => checkWavLength(streamed), 'nor does espeak-ng or sox writing to a pipe');
});
