// The System One wire's shapes over the fake binding (fast): answers per question id with the
// documented numbers, 422 `detail[]` for every kind of bad request (never a 5xx), the gate's
// 401 and 429 in the wire's `detail{}`, model aliases, usage in the ledger, and /v1/models
// serving both listings.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-s1-'));
const server = await startGatedServer({ auth: 'on', databaseUrl: join(dir, 'service.db'), rateLimit: 40 });
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
const { key } = await issueKey(server.access.store, 'test', 'wire');
const auth = { headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } };
const url = `${server.url}/v1/systemone`;

const QUESTIONS = {
  refund: { type: 'noul', instructions: 'Is the customer asking for money back?', criteria: { true: 'a refund' } },
  team: {
    type: 'choice',
    instructions: ['Route the ticket.'],
    criteria: { Billing: 'Payments', Technical: null, 환불: { owns: ['refunds'] } },
  },
  anger: { type: 'score', criteria: ['Calm', { label: 'Frustrated' }, 'Very angry'] },
};

t.test('an answer per question id, with the documented numbers', async (t) => {
  const res = await post(
    url,
    { model: 'jev-latest', state: { subject: 'Charged twice' }, questions: QUESTIONS, x_trace: 1 },
    auth,
  );
  t.equal(res.status, 200, res.text);
  const { model, answers, usage } = res.json;
  t.equal(model, 'decision-machine-1');
  t.same(Object.keys(answers), ['refund', 'team', 'anger']);
  t.ok(answers.refund.noul >= 0 && answers.refund.noul <= 1);
  t.same(Object.keys(answers.team.probabilities), ['Billing', 'Technical', '환불'], 'option names round-trip');
  const p: number[] = Object.values(answers.team.probabilities);
  t.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
  t.equal(answers.team.probabilities[answers.team.choice], Math.max(...p), 'choice is the argmax');
  t.ok(
    Math.abs(answers.team.confidence - (Math.max(...p) - 1 / 3) / (2 / 3)) < 1e-9,
    'choice confidence: (p_max - 1/n) / (1 - 1/n)',
  );
  t.same(answers.anger.legend, { 0: 'Calm', 1: { label: 'Frustrated' }, 2: 'Very angry' });
  const q: number[] = [0, 1, 2].map((i) => answers.anger.probabilities[String(i)]);
  t.ok(Math.abs(answers.anger.score - (q[1]! + 2 * q[2]!)) < 1e-9, 'score is the expectation');
  t.ok(Number.isInteger(usage.input_tokens) && usage.input_tokens > 0 && usage.output_tokens === 0);
  t.equal(res.headers.get('x-input-tokens'), String(usage.input_tokens));
  t.ok(Number(res.headers.get('x-inference-ms')) >= 0);
  t.equal(res.headers.get('x-ratelimit-limit-requests'), '40');

  const reversed = Object.fromEntries(Object.entries(QUESTIONS).reverse());
  const again = await post(
    url,
    {
      model: 'decision-machine-1',
      state: { subject: 'Charged twice' },
      questions: { ...reversed, extra: { type: 'noul', instructions: 'Other?' } },
    },
    auth,
  );
  t.equal(again.status, 200);
  for (const id of Object.keys(QUESTIONS))
    t.same(again.json.answers[id], answers[id], `${id}: the same with other questions, in another order`);
});

t.test('bad requests: 422 with detail[] locating the field, never a 5xx', async (t) => {
  const base = { model: 'jev-latest', state: 'x', questions: { q: QUESTIONS.refund } };
  const cases: [string, unknown, (string | number)[]][] = [
    ['not JSON', '{"model": ', ['body']],
    ['missing state', { model: 'jev-latest', questions: base.questions }, ['body', 'state']],
    ['state null', { ...base, state: null }, ['body', 'state']],
    ['no questions', { ...base, questions: {} }, ['body', 'questions']],
    ['no type', { ...base, questions: { q: { instructions: 'x' } } }, ['body', 'questions', 'q']],
    ['unknown type', { ...base, questions: { q: { type: 'boolean' } } }, ['body', 'questions', 'q']],
    [
      'one option',
      { ...base, questions: { q: { type: 'choice', criteria: { A: null } } } },
      ['body', 'questions', 'q', 'choice', 'criteria'],
    ],
    [
      '256 options',
      {
        ...base,
        questions: {
          q: { type: 'choice', criteria: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`o${i}`, null])) },
        },
      },
      ['body', 'questions', 'q', 'choice', 'criteria'],
    ],
    [
      '11 levels',
      { ...base, questions: { q: { type: 'score', criteria: Array(11).fill('l') } } },
      ['body', 'questions', 'q', 'score', 'criteria'],
    ],
    [
      'a null level',
      { ...base, questions: { q: { type: 'score', criteria: ['a', null] } } },
      ['body', 'questions', 'q', 'score', 'criteria', 1],
    ],
    [
      'score criteria as a map',
      { ...base, questions: { q: { type: 'score', criteria: { 0: 'a', 1: 'b' } } } },
      ['body', 'questions', 'q', 'score', 'criteria'],
    ],
    [
      'a noul asking nothing',
      { ...base, questions: { q: { type: 'noul' } } },
      ['body', 'questions', 'q', 'noul', 'instructions'],
    ],
    [
      'a third noul side',
      { ...base, questions: { q: { type: 'noul', instructions: 'x', criteria: { maybe: 'x' } } } },
      ['body', 'questions', 'q', 'noul', 'criteria'],
    ],
    ['an image asset', { ...base, assets: { a: { type: 'image', part: 'asset-0' } } }, ['body', 'assets']],
    [
      'a box question',
      { ...base, questions: { q: { type: 'box', instructions: 'the dog' } } },
      ['body', 'questions', 'q', 'type'],
    ],
  ];
  for (const [what, body, loc] of cases) {
    const res = await post(url, body, auth);
    t.equal(res.status, 422, `${what}: 422 (${res.text.slice(0, 200)})`);
    t.same(res.json?.detail?.[0]?.loc, loc, `${what}: detail[0].loc`);
    t.type(res.json?.detail?.[0]?.msg, 'string');
    t.equal(res.json?.error?.code, 'invalid_request', `${what}: the service's envelope too`);
  }
  const image = await post(url, base, {
    headers: { ...auth.headers, 'content-type': 'multipart/form-data; boundary=x' },
  });
  t.match(image.json.detail[0].msg, 'images are not supported by this deployment');
});

t.test("the gate's refusals and an unknown model in the wire's detail{}", async (t) => {
  const body = { model: 'jev-latest', state: 'x', questions: { q: QUESTIONS.refund } };
  const missing = await post(url, body);
  t.equal(missing.status, 401);
  t.same(missing.json.detail, { error_type: 'authentication_error', message: missing.json.error.message });
  const wrong = await post(url, body, {
    headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
  });
  t.equal(wrong.json.detail.error_type, 'authentication_error');
  const model = await post(url, { ...body, model: 'gpt-4o' }, auth);
  t.equal(model.status, 404);
  t.equal(model.json.detail.error_type, 'not_found');

  // Each question counts one request against the key's limit, as each statement does.
  const { key: small } = await issueKey(server.access.store, 'test', 'small');
  const many = {
    ...body,
    questions: Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`q${i}`, { type: 'noul', instructions: 'x?' }]),
    ),
  };
  const headers = { headers: { 'content-type': 'application/json', authorization: `Bearer ${small}` } };
  t.equal((await post(url, many, headers)).status, 200);
  const limited = await post(url, many, headers);
  t.equal(limited.status, 429);
  t.equal(limited.json.detail.error_type, 'rate_limit_error');
  t.equal(limited.json.error.code, 'rate_limit_exceeded');
  t.ok(Number(limited.headers.get('retry-after')) > 0);
});

t.test('batch: one question set over several states; usage in the ledger', async (t) => {
  const res = await post(
    `${url}/batch`,
    { model: 'jev-latest', states: ['a [true]', ['b']], questions: { q: QUESTIONS.refund } },
    auth,
  );
  t.equal(res.status, 200, res.text);
  t.equal(res.json.results.length, 2);
  t.ok(res.json.results.every((r: { answers: { q: { type: string } } }) => r.answers.q.type === 'noul'));
  const rows = await server.access.store.usage();
  t.ok(rows.find((r) => r.organization === 'wire')!.requests >= 3, 'answered calls are billed');
});

t.test('GET /v1/models lists for OpenAI clients (data) and System One clients (models)', async (t) => {
  const res = await fetch(`${server.url}/v1/models`, auth);
  const body = (await res.json()) as {
    object: string;
    data: { id: string }[];
    models: { name: string; release_date: string }[];
  };
  t.equal(body.object, 'list');
  t.same(
    body.data.map((m) => m.id),
    ['decision-machine-1'],
  );
  t.same(
    body.models.map((m) => m.name),
    ['jev-latest', 'decision-machine-1'],
  );
});

t.test('a batch whose choice prior passes the token budget is refused, and the process lives', async (t) => {
  const { key: own } = await issueKey(server.access.store, 'test', 'budget');
  const headers = { headers: { 'content-type': 'application/json', authorization: `Bearer ${own}` } };
  const statuses: number[] = [];
  // Two long states fit the request's token budget; the choice's content-free prior is a second
  // job charged after them, which passes it somewhere in this sweep (a fresh option set each time,
  // so the prior is never cached). The states' job must then be cancelled, not left to crash.
  for (let n = 3000; n <= 3700; n += 70) {
    const questions = { pick: { type: 'choice', criteria: { [`Alpha ${n}`]: null, [`Beta ${n}`]: null } } };
    const res = await post(
      `${url}/batch`,
      { model: 'jev-latest', states: ['x'.repeat(n), 'y'.repeat(n)], questions },
      headers,
    );
    statuses.push(res.status);
    if (res.status !== 200) t.match(res.text, /tokens/, `${n}: the refusal names the token limit`);
  }
  t.ok(
    statuses.includes(200) && statuses.some((s) => s === 400 || s === 422),
    `answered and refused: ${statuses.join(' ')}`,
  );
  t.ok(
    statuses.every((s) => s === 200 || s === 400 || s === 422),
    'only answers and refusals',
  );
  t.equal((await fetch(`${server.url}/`)).status, 200, 'the process still answers');
});
