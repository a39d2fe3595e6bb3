// The hostile inputs of every text capability: each a clear 400 in the error envelope that names
// the field, never a 5xx, and the service still answers afterwards.
import t from 'tap';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' }, 4 * 1024 * 1024);
t.teardown(server.close);
const at = (capability: string) => `${server.url}/v1/decision-machine-1/${capability}`;

// A valid request per capability, minus its text.
const REST: Record<string, Record<string, unknown>> = {
  'yes-no': { statement: 's' },
  classify: { labels: ['a', 'b'] },
  'classify-tree': { tree: { a: 'x', b: 'y' } },
  rate: { scale: ['low', 'high'] },
  answer: { question: 'q?' },
  extract: { schema: { type: 'object', properties: { name: { type: 'string' } } } },
  entities: { types: ['person'] },
  verify: { field: { name: 'total' }, value: 2000 },
};

const long = 'x'.repeat(20_001);
const lone = 'before \ud800 after';

t.test('texts: empty, 20,001 characters, 33 of them, lone surrogates', async (t) => {
  for (const [capability, rest] of Object.entries(REST)) {
    const cases: [string, unknown, RegExp][] = [
      ['empty text', { ...rest, text: '' }, /^text: Too small: expected string to have >=1 characters/],
      ['20,001 characters', { ...rest, text: long }, /^text: Too big: expected string to have <=20000 characters/],
      ['33 texts', { ...rest, texts: Array(33).fill('a') }, /^texts: Too big: expected array to have <=32 items/],
      ['an empty string in texts', { ...rest, texts: ['a', ''] }, /^texts\.1: Too small/],
      ['a lone surrogate', { ...rest, text: lone }, /^text: contains a lone surrogate/],
    ];
    for (const [name, body, message] of cases) {
      const res = await post(at(capability), body);
      t.equal(res.status, 400, `${capability}: ${name}`);
      t.equal(res.json?.error?.code, 'invalid_request', `${capability}: ${name}`);
      t.match(res.json?.error?.message, message, `${capability}: ${name}`);
    }
  }
});

t.test('invalid UTF-8 bytes in a body: 400 on every capability', async (t) => {
  for (const capability of Object.keys(REST)) {
    const body = Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const res = await post(at(capability), body);
    t.equal(res.status, 400, capability);
    t.same(res.json, { error: { code: 'invalid_request', message: 'body: not valid UTF-8' } }, capability);
  }
});

t.test('label and scale limits: 65 labels, 1-entry scale, 65 types', async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ['classify', { text: 'x', labels: Array.from({ length: 65 }, (_, i) => `l${i}`) }, /^labels: Too big/],
    ['rate', { text: 'x', scale: ['only'] }, /^scale: Too small/],
    ['entities', { text: 'x', types: Array.from({ length: 65 }, (_, i) => `t${i}`) }, /^types: Too big/],
  ];
  for (const [capability, body, message] of cases) {
    const res = await post(at(capability), body);
    t.equal(res.status, 400, capability);
    t.match(res.json.error.message, message);
  }
});

t.test('deep and recursive schemas are refused with invalid_schema', async (t) => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { inner: deep } };
  const recursive = { type: 'object', properties: { node: { $ref: '#' } } };
  const defs = {
    type: 'object',
    $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } },
    properties: { head: { $ref: '#/$defs/n' } },
  };
  for (const schema of [
    deep,
    recursive,
    defs,
    { type: 'array', items: { type: 'string' } },
    { type: 'object', properties: {} },
  ]) {
    const res = await post(at('extract'), { text: 'x', schema });
    t.equal(res.status, 400, JSON.stringify(schema).slice(0, 60));
    t.ok(['invalid_schema', 'invalid_request'].includes(res.json.error.code));
    t.ok(res.json.error.message.length > 0);
  }
});

t.test('still serving afterwards, nothing left running', async (t) => {
  const res = await post(at('yes-no'), { text: 'a', statement: 'b' });
  t.equal(res.status, 200);
  t.equal(server.engine.stats().inflight, 0);
});
