// Corrections through the API, with keys on, over the fake binding (what is checked here is the
// contract, not the model): every correctable decision carries its id, a correction is stored for
// the organization that made the decision, and a wrong label, an unknown id, a malformed body or
// another organization's id is refused with nothing stored. Feedback is billed as a request.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../src/auth/keys.js';
import { readLine } from '../../src/heads/fit.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-feedback-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const server = await startGatedServer({ auth: 'on', databaseUrl: join(dir, 'service.db'), rateLimit: 0 });
t.teardown(server.close);
const store = server.access.store;
const acme = (await issueKey(store, 'prod', 'acme')).key;
const globex = (await issueKey(store, 'prod', 'globex')).key;
const as = (key: string) => ({ headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
const route = (name: string) => `${server.url}/v1/decision-machine-1/${name}`;

const LABELS = { billing: 'money matters', bug: 'it is broken' };
const classified = (text: string) => ({ cap: 'classify', req: { text, labels: LABELS } });
const signature = readLine({ ...classified('x'), expect: { label: 'bug' } }).sig.id;
const stored = async (organization: string) => (await store.corrections(organization, signature)).length;

t.test('every correctable decision carries its id; one per result, in order, for a batch', async (t) => {
  const one = await post(route('yes-no'), { text: 'The invoice is paid.', statement: 'It was paid' }, as(acme));
  t.equal(one.status, 200);
  t.match(one.headers.get('x-decision-id'), /^dec_[0-9a-f]{24}$/);
  const batch = await post(route('classify'), { texts: ['a', 'b', 'c'], labels: LABELS }, as(acme));
  const ids = batch.headers.get('x-decision-ids')!.split(',');
  t.equal(ids.length, 3, 'three texts, three ids');
  t.equal(new Set(ids).size, 3);
  t.equal(batch.headers.get('x-decision-id'), null);
  const grid = await post(route('yes-no'), { texts: ['a', 'b'], statements: ['x', 'y', 'z'] }, as(acme));
  t.equal(grid.headers.get('x-decision-ids')!.split(',').length, 6, 'texts x statements');
  const kept = await store.findDecision(ids[1]!);
  t.same(JSON.parse(kept!.line), { cap: 'classify', req: { text: 'b', labels: LABELS } }, 'kept as its fit line');
  t.equal(kept!.organization, 'acme');
  const extracted = await post(
    route('extract'),
    { text: 'Paid by Ada.', schema: { type: 'object', properties: { payer: { type: 'string' } } } },
    as(acme),
  );
  t.equal(extracted.status, 200);
  t.equal(extracted.headers.get('x-decision-id'), null, 'extract has nothing a head could learn');
});

t.test('a correction is stored for its organization (202) and billed as a request', async (t) => {
  const made = await post(route('classify'), { text: 'The app crashes on start.', labels: LABELS }, as(acme));
  const id = made.headers.get('x-decision-id')!;
  const before = (await store.usage()).find((u) => u.organization === 'acme')!.requests;
  const res = await post(route('feedback'), { id, expect: { label: 'bug' } }, as(acme));
  t.equal(res.status, 202, res.text);
  t.match(res.json, { object: 'correction', id, decision: id, capability: 'classify', signature, corrections: 1 });
  t.equal(await stored('acme'), 1);
  const after = (await store.usage()).find((u) => u.organization === 'acme')!.requests;
  t.equal(after, before + 1, 'one more billed request');

  const again = await post(route('feedback'), { id, expect: { label: 'billing' } }, as(acme));
  t.equal(again.status, 202);
  t.equal(again.json.corrections, 1, 'a second correction of the same decision replaces the first');
  const [only] = await store.corrections('acme', signature);
  t.same(JSON.parse(only!.line).expect, { label: 'billing' });

  const whole = await post(
    route('feedback'),
    { ...classified('Refund my card.'), expect: { label: 'billing' } },
    as(acme),
  );
  t.equal(whole.status, 202, 'a fit line sent whole, for a decision the service never saw');
  t.equal(whole.json.decision, null);
  t.equal(await stored('acme'), 2);
});

t.test(
  'refused with nothing stored: a wrong label, an unknown id, a malformed body, another organization',
  async (t) => {
    const made = await post(route('classify'), { text: 'Where is my refund?', labels: LABELS }, as(acme));
    const id = made.headers.get('x-decision-id')!;
    const count = await stored('acme');
    const cases: [string, unknown, string, number, string, RegExp][] = [
      ['a label not in the set', { id, expect: { label: 'shipping' } }, acme, 400, 'invalid_request', /expect\.label/],
      [
        'a level off the scale',
        { ...classified('x'), cap: 'rate', req: { text: 'x', scale: ['low', 'high'] }, expect: { level: 5 } },
        acme,
        400,
        'invalid_request',
        /expect\.level/,
      ],
      [
        'an unknown id',
        { id: 'dec_000000000000000000000000', expect: { label: 'bug' } },
        acme,
        404,
        'decision_not_found',
        /not found/,
      ],
      ['no expect', { id }, acme, 400, 'invalid_request', /expect/],
      ['a body that is a list', [id], acme, 400, 'invalid_request', /body/],
      ['an unknown field', { id, expect: { label: 'bug' }, labels: 1 }, acme, 400, 'invalid_request', /labels/],
      [
        "another organization's decision",
        { id, expect: { label: 'bug' } },
        globex,
        404,
        'decision_not_found',
        /another organization/,
      ],
    ];
    for (const [what, body, key, status, code, message] of cases) {
      const res = await post(route('feedback'), body, as(key));
      t.equal(res.status, status, what);
      t.equal(res.json?.error?.code, code, what);
      t.match(res.json?.error?.message, message, what);
    }
    const notJson = await post(route('feedback'), '{"id":', as(acme));
    t.equal(notJson.status, 400, 'malformed JSON');
    t.equal(await stored('acme'), count, 'nothing stored for acme');
    t.equal(await stored('globex'), 0, 'nor for globex');
  },
);

t.test('a System One answer: one id for its questions, each corrected by its question id', async (t) => {
  const asked = await post(
    `${server.url}/v1/systemone`,
    {
      model: 'decision-machine-1',
      state: 'I was charged twice for my March invoice.',
      questions: {
        refund: { type: 'noul', instructions: 'The customer wants money back.' },
        team: { type: 'choice', criteria: { Billing: 'payments and invoices', Tech: null } },
        anger: { type: 'score', criteria: ['calm', 'annoyed', 'furious'] },
      },
    },
    as(acme),
  );
  t.equal(asked.status, 200, asked.text);
  const id = asked.headers.get('x-decision-id')!;
  t.match(id, /^dec_[0-9a-f]{24}$/);
  const team = await post(route('feedback'), { id, question: 'team', expect: { label: 'Billing' } }, as(acme));
  t.equal(team.status, 202, team.text);
  t.match(team.json, { capability: 'classify', decision: `${id}/team` });
  const kept = await store.findDecision(`${id}/team`);
  t.same(JSON.parse(kept!.line).req.labels, { Billing: 'payments and invoices', Tech: '' }, 'kept as classify');
  const anger = await post(route('feedback'), { id, question: 'anger', expect: { level: 3 } }, as(acme));
  t.equal(anger.status, 400, 'a level off the score scale');
  t.match(anger.json.error.message, /expect\.level/);
  const none = await post(route('feedback'), { id, expect: { answer: true } }, as(acme));
  t.equal(none.status, 404, 'without its question');
  t.match(none.json.error.message, /needs its question/);
});

t.test('GET /v1/heads: the caller sees its own and the deployment heads only', async (t) => {
  const res = await fetch(`${server.url}/v1/heads`, as(globex));
  t.equal(res.status, 200);
  t.same(await res.json(), { object: 'list', data: [] });
  t.equal((await fetch(`${server.url}/v1/heads`)).status, 401, 'behind the key check');
});

t.test('with DM_FEEDBACK_RETENTION=0 no decision is kept and none carries an id', async (t) => {
  const off = await startGatedServer({ databaseUrl: join(dir, 'off.db'), feedbackRetentionDays: 0 });
  t.teardown(off.close);
  const res = await post(`${off.url}/v1/decision-machine-1/yes-no`, { text: 'a', statement: 'b' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-decision-id'), null);
});
