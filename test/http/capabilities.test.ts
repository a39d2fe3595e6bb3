// classify, classify-tree and rate over HTTP with the fake binding: shapes, the text/texts rule,
// validation messages. (The fake scores favour the first option unless a branch says "[true]".)
import t from 'tap';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' });
t.teardown(server.close);
const at = (capability: string) => `${server.url}/v1/decision-machine-1/${capability}`;
const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

t.test('classify: label, probability, confidence and scores that sum to 1', async (t) => {
  const res = await post(at('classify'), { text: 'hello', labels: ['alpha', 'beta', 'gamma'] });
  t.equal(res.status, 200);
  t.same(Object.keys(res.json.scores), ['alpha', 'beta', 'gamma']);
  const sum = Object.values(res.json.scores as Record<string, number>).reduce((a, b) => a + b, 0);
  t.ok(close(sum, 1), 'scores sum to 1');
  t.equal(res.json.probability, res.json.scores[res.json.label]);
  t.ok(res.json.confidence >= 0 && res.json.confidence <= 1);
  t.ok(Number(res.headers.get('x-input-tokens')) > 0);
  t.equal(res.headers.get('x-input-chars'), String('hello'.length + 'alphabetagamma'.length));
});

t.test('classify: object labels return names, never descriptions', async (t) => {
  const res = await post(at('classify'), { texts: ['a', 'b'], labels: { spam: 'junk mail', ham: 'real mail' } });
  t.equal(res.json.results.length, 2);
  for (const r of res.json.results) t.ok(['spam', 'ham'].includes(r.label));
});

t.test('classify-tree: a path, levels with all seven fields, products', async (t) => {
  const tree = {
    order: { description: 'orders', labels: { late: 'late delivery', damaged: 'broken' } },
    account: 'the account',
  };
  const res = await post(at('classify-tree'), { text: 'where is my parcel', tree });
  t.equal(res.status, 200);
  t.equal(res.json.path.length, res.json.levels.length);
  t.equal(res.json.label, res.json.path[res.json.path.length - 1]);
  for (const level of res.json.levels) {
    t.same(Object.keys(level).sort(), [
      'confidence',
      'inference_ms',
      'input_chars',
      'input_tokens',
      'label',
      'probability',
      'scores',
    ]);
  }
  const product = res.json.levels.reduce((p: number, l: { probability: number }) => p * l.probability, 1);
  t.ok(close(res.json.probability, product));
  const tokens = res.json.levels.reduce((n: number, l: { input_tokens: number }) => n + l.input_tokens, 0);
  t.equal(res.headers.get('x-input-tokens'), String(tokens));
});

t.test('rate: score is the probability-weighted level, level the argmax', async (t) => {
  const scale = ['low', 'mid', 'high'];
  const res = await post(at('rate'), { text: 'x', scale });
  t.equal(res.status, 200);
  t.equal(res.json.scores.length, 3);
  const weighted = res.json.scores.reduce((s: number, p: number, i: number) => s + p * i, 0);
  t.ok(close(res.json.score, weighted));
  t.equal(res.json.level, res.json.scores.indexOf(Math.max(...res.json.scores)));
  t.equal(res.json.label, scale[res.json.level]);
});

t.test('the text/texts rule and the limits, with the spec messages', async (t) => {
  const cases: [string, unknown, string][] = [
    ['classify', { labels: ['a', 'b'] }, 'provide text or texts, not both'],
    ['classify', { text: 'x', texts: ['y'], labels: ['a', 'b'] }, 'provide text or texts, not both'],
    ['classify', { text: 'x', labels: ['a'] }, 'labels: Too small: expected array to have >=2 items'],
    [
      'classify',
      { text: 'x', labels: Array.from({ length: 65 }, (_, i) => `l${i}`) },
      'labels: Too big: expected array to have <=64 items',
    ],
    ['classify', { text: 'x', labels: ['a', ''] }, 'labels.1: Too small: expected string to have >=1 characters'],
    ['classify', { text: 'x', labels: { a: 'A' } }, 'labels: Too small: expected object to have >=2 keys'],
    ['classify', { text: 'x', labels: 'a,b' }, 'labels: Invalid input: expected array or object, received string'],
    ['classify', { text: 'x' }, 'labels: Invalid input: expected array or object, received undefined'],
    ['rate', { text: 'x', scale: ['only'] }, 'scale: Too small: expected array to have >=2 items'],
    ['rate', { text: 'x', scale: Array(11).fill('s') }, 'scale: Too big: expected array to have <=10 items'],
    ['classify-tree', { text: 'x', tree: {} }, 'tree: Too small: expected object to have >=1 keys'],
    [
      'classify-tree',
      { text: 'x', tree: { a: { labels: { b: 5 } } } },
      'tree.a.labels.b: Invalid input: expected string or object, received number',
    ],
  ];
  for (const [capability, body, message] of cases) {
    const res = await post(at(capability), body);
    t.equal(res.status, 400, message);
    t.same(res.json, { error: { code: 'invalid_request', message } }, message);
  }
});

t.test('hostile nesting: a deep tree and a 30,000-deep document are clear 400s', async (t) => {
  let tree: Record<string, unknown> = { leaf: 'end' };
  for (let i = 0; i < 12; i++) tree = { [`n${i}`]: { description: 'd', labels: tree } };
  const deep = await post(at('classify-tree'), { text: 'x', tree });
  t.equal(deep.status, 400);
  t.match(deep.json.error.message, /^(tree: deeper than 8 levels|body: nested deeper than 32 levels)/);
  const bomb = await post(at('classify'), '['.repeat(30_000) + ']'.repeat(30_000));
  t.equal(bomb.status, 400);
  t.equal(bomb.json.error.message, 'body: nested deeper than 32 levels');
});

t.test('answer: a span with exact offsets, or null with probability 0', async (t) => {
  const text = 'Paris is the capital.';
  const res = await post(at('answer'), { text, questions: ['What is the capital?', 'Who? [none]'] });
  t.equal(res.status, 200);
  const [found, none] = res.json.results;
  t.equal(found.answer, 'Paris');
  t.equal(text.slice(found.start, found.end), found.answer);
  t.equal(found.end - found.start, found.answer.length);
  t.same(none, { question: 'Who? [none]', answer: null, probability: 0, start: null, end: null });
  const missing = await post(at('answer'), { text });
  t.same(missing.json, { error: { code: 'invalid_request', message: 'body: provide question or questions' } });
});

t.test('answer: texts x questions nest text-major', async (t) => {
  const res = await post(at('answer'), { texts: ['a b', 'c d'], questions: ['q1', 'q2'] });
  t.equal(res.json.results.length, 2);
  t.equal(res.json.results[1].results[0].answer, 'c');
});

t.test('entities: typed spans sorted by start, offsets that slice the text', async (t) => {
  const text = 'Tim went home.';
  const res = await post(at('entities'), { text, types: { person: 'a human', place: 'a location' } });
  t.equal(res.status, 200);
  for (const e of res.json.entities) {
    t.equal(text.slice(e.start, e.end), e.text);
    t.ok(['person', 'place'].includes(e.type));
  }
  const starts = res.json.entities.map((e: { start: number }) => e.start);
  t.same(
    starts,
    [...starts].sort((a, b) => a - b),
  );
  const bad = await post(at('entities'), { text, types: [] });
  t.equal(bad.json.error.message, 'types: Too small: expected array to have >=1 items');
});

t.test('verify: found spans, a boolean and a probability; field is required', async (t) => {
  const res = await post(at('verify'), { text: 'Total 2000 USD.', field: { name: 'total' }, value: 2000 });
  t.equal(res.status, 200);
  t.same(Object.keys(res.json).sort(), ['found', 'matches', 'probability']);
  t.ok(Array.isArray(res.json.found));
  const bad = await post(at('verify'), { text: 'x', value: 1 });
  t.equal(bad.json.error.message, 'field: Invalid input: expected object, received undefined');
  const badValue = await post(at('verify'), { text: 'x', field: { name: 'n' }, value: true });
  t.equal(badValue.json.error.message, 'value: Invalid input: expected string or number, received boolean');
});
