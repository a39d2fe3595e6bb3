// The yes-no endpoint over real HTTP (uWebSockets.js) with the fake binding: shapes, headers,
// validation messages and the plain-text 404.
import t from 'tap';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' });
t.teardown(server.close);
const url = `${server.url}/v1/decision-machine-1/yes-no`;
const text = 'The meeting moved to Thursday.';

t.test('one text, one statement: a single result with billing headers', async (t) => {
  const res = await post(url, { text, statement: 'It moved [true]' });
  t.equal(res.status, 200);
  t.same(Object.keys(res.json).sort(), ['answer', 'probability', 'statement']);
  t.equal(res.json.statement, 'It moved [true]');
  t.equal(res.json.answer, true);
  t.ok(res.json.probability > 0.5 && res.json.probability <= 1);
  t.equal(res.headers.get('x-input-chars'), String(text.length + 'It moved [true]'.length));
  t.ok(Number(res.headers.get('x-input-tokens')) > 0);
});

t.test('answer is true exactly when probability >= 0.5', async (t) => {
  const res = await post(url, { text, statements: ['a [true]', 'b'] });
  for (const r of res.json.results) t.equal(r.answer, r.probability >= 0.5);
  t.same(
    res.json.results.map((r: { answer: boolean }) => r.answer),
    [true, false],
  );
});

t.test('statements: results in input order', async (t) => {
  const res = await post(url, { text, statements: ['one', 'two [true]', 'three'] });
  t.equal(res.status, 200);
  t.same(
    res.json.results.map((r: { statement: string }) => r.statement),
    ['one', 'two [true]', 'three'],
  );
});

t.test('texts with one statement: one result per text, in order', async (t) => {
  const res = await post(url, { texts: ['a', 'b', 'c'], statement: 's' });
  t.equal(res.json.results.length, 3);
});

t.test('texts x statements: nested results, text-major', async (t) => {
  const res = await post(url, { texts: ['a', 'b'], statements: ['x [true]', 'y', 'z'] });
  t.equal(res.json.results.length, 2);
  for (const inner of res.json.results) {
    t.same(
      inner.results.map((r: { statement: string }) => r.statement),
      ['x [true]', 'y', 'z'],
    );
  }
});

t.test('yes-no accepts both text and texts, and neither', async (t) => {
  const both = await post(url, { text: 'a', texts: ['b'], statement: 's' });
  t.equal(both.status, 200);
  t.equal(both.json.results.length, 2);
  const neither = await post(url, { statement: 'Paris is in France [true]' });
  t.equal(neither.status, 200);
  t.equal(neither.json.answer, true);
  const claim = await post(url, { text: 'The sky is green.' });
  t.equal(claim.json.statement, 'The sky is green.');
});

t.test('validation errors use the envelope and name the field', async (t) => {
  const cases: [unknown, string][] = [
    [{}, 'provide text, texts, statement or statements'],
    [{ text: '', statement: 's' }, 'text: Too small: expected string to have >=1 characters'],
    [{ text: 'x'.repeat(20001), statement: 's' }, 'text: Too big: expected string to have <=20000 characters'],
    [{ texts: [], statement: 's' }, 'texts: Too small: expected array to have >=1 items'],
    [{ texts: Array(33).fill('a'), statement: 's' }, 'texts: Too big: expected array to have <=32 items'],
    [{ text: 'a', statements: Array(33).fill('s') }, 'statements: Too big: expected array to have <=32 items'],
    [{ text: 'a', statement: '' }, 'statement: Too small: expected string to have >=1 characters'],
    [{ text: 5, statement: 's' }, 'text: Invalid input: expected string, received number'],
    [{ text: 'a', labels: ['x'] }, 'body: Unrecognized key: "labels"'],
    [{ texts: ['a', ''], statement: 's' }, 'texts.1: Too small: expected string to have >=1 characters'],
    [[1, 2], 'body: Invalid input: expected object, received array'],
  ];
  for (const [body, message] of cases) {
    const res = await post(url, body);
    t.equal(res.status, 400, message);
    t.same(res.json, { error: { code: 'invalid_request', message } }, message);
  }
});

t.test('at most three issues, joined with "; "', async (t) => {
  const res = await post(url, { text: '', statement: '', when_true: 1, when_false: 2, statements: [] });
  t.equal(res.status, 400);
  t.equal(res.json.error.message.split('; ').length, 3);
});

t.test('malformed bodies: clear 400s, never a crash', async (t) => {
  const bad: [string | Uint8Array, RegExp][] = [
    ['{"text": ', /^body: invalid JSON/],
    ['', /^body: Invalid input: expected a JSON object/],
    [new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /^body: not valid UTF-8$/],
    ['{"text": "\\ud800", "statement": "s"}', /^text: contains a lone surrogate/],
    ['null', /^body: Invalid input: expected object, received null/],
  ];
  for (const [body, message] of bad) {
    const res = await post(url, body);
    t.equal(res.status, 400);
    t.equal(res.json.error.code, 'invalid_request');
    t.match(res.json.error.message, message);
  }
  const alive = await fetch(`${server.url}/`);
  t.equal(alive.status, 200);
});

t.test('a body over the cap is refused with 413', async (t) => {
  const res = await post(url, { text: 'x'.repeat(70 * 1024), statement: 's' });
  t.equal(res.status, 413);
  t.equal(res.json.error.code, 'payload_too_large');
});

t.test('unrouted paths and wrong methods: plain-text Not Found', async (t) => {
  for (const [method, path] of [
    ['GET', '/v1/decision-machine-1/yes-no'],
    ['POST', '/v1/nothing'],
    ['DELETE', '/'],
  ] as const) {
    const res = await fetch(server.url + path, { method });
    t.equal(res.status, 404, `${method} ${path}`);
    t.match(res.headers.get('content-type'), /^text\/plain/);
    t.equal(await res.text(), 'Not Found');
  }
});

t.test('GET / describes the service', async (t) => {
  const res = await fetch(`${server.url}/`);
  const body = (await res.json()) as { name: string; model: string };
  t.equal(body.name, 'decision-machine-1');
  t.equal(body.model, 'decision-machine-1');
});
