// A deployment that must not store texts (DM_FEEDBACK_TEXTS=hash), over the fake binding: a kept
// decision and a correction keep their text's SHA-256 and what the model read of it, the text is
// nowhere in the database, and a refit fits on those readings alone.
import t from 'tap';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLine } from '../../src/heads/fit.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-hashed-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const databaseUrl = join(dir, 'service.db');
const server = await startGatedServer({ databaseUrl, feedbackTexts: 'hash' });
t.teardown(server.close);
const store = server.access.store;
const route = (name: string) => `${server.url}/v1/decision-machine-1/${name}`;

const LABELS = { billing: 'money matters', bug: 'it is broken' };
const signature = readLine({ cap: 'classify', req: { text: 'x', labels: LABELS }, expect: { label: 'bug' } }).sig.id;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Every byte the store wrote: the database file and its write-ahead log. */
const written = () =>
  ['', '-wal']
    .map((s) => databaseUrl + s)
    .reduce((all, f) => all + (existsSync(f) ? readFileSync(f, 'latin1') : ''), '');

const SECRET = 'Patient Zebulon Quaxworth was charged twice for invoice 7731.';

t.test('a kept decision keeps its text as a hash and its reading, never the text', async (t) => {
  const made = await post(route('classify'), { text: SECRET, labels: LABELS });
  t.equal(made.status, 200);
  const id = made.headers.get('x-decision-id')!;
  const kept = await store.findDecision(id);
  t.same(JSON.parse(kept!.line), { cap: 'classify', req: { labels: LABELS }, text_sha256: sha256(SECRET) });
  await server.feedback.refits.settled();
  const res = await post(route('feedback'), { id, expect: { label: 'billing' } });
  t.equal(res.status, 202, res.text);
  await server.feedback.refits.settled();
  const [correction] = await store.corrections('', signature);
  t.notOk(JSON.parse(correction!.line).req.text, 'the correction has no text');
  t.equal(JSON.parse(correction!.line).text_sha256, sha256(SECRET));
  t.ok(correction!.reading, 'the reading made when it was decided is the correction’s');
  t.notOk(written().includes('Zebulon'), 'the text is nowhere in the database');
});

t.test('a fit line sent whole is read, then kept without its text', async (t) => {
  const text = 'Quaxworth reports the export button crashes the app.';
  const res = await post(route('feedback'), {
    cap: 'classify',
    req: { text, labels: LABELS },
    expect: { label: 'bug' },
  });
  t.equal(res.status, 202, res.text);
  await server.feedback.refits.settled();
  const whole = (await store.corrections('', signature)).find((c) => c.id === res.json.id)!;
  t.equal(JSON.parse(whole.line).text_sha256, sha256(text));
  t.ok(whole.reading);
  t.notOk(written().includes('export button'), 'the text is nowhere in the database');
});

t.test('a refit fits on the kept readings alone; forgotten decisions take their readings', async (t) => {
  for (let i = 0; i < 8; i++) {
    for (const [label, text] of [
      ['billing', `Invoice ${i} was charged twice.`],
      ['bug', `Screen ${i} freezes on save.`],
    ] as const) {
      const id = (await post(route('classify'), { text, labels: LABELS })).headers.get('x-decision-id')!;
      t.equal((await post(route('feedback'), { id, expect: { label } })).status, 202);
    }
  }
  await server.feedback.refits.settled(); // the refit the 16th correction started
  const { result } = await server.feedback.refits.refit('', signature, true);
  t.ok(result === 'stored' || result === 'kept', `the refit fitted on the readings (${result})`);
  const unread = await post(route('classify'), { text: 'never corrected', labels: LABELS });
  await server.feedback.refits.settled();
  const unreadId = unread.headers.get('x-decision-id')!;
  const readings = () => {
    const db = new Database(databaseUrl, { readonly: true });
    const n = (db.prepare('SELECT count(*) AS n FROM correction_readings WHERE id = ?').get(unreadId) as { n: number })
      .n;
    db.close();
    return n;
  };
  t.equal(readings(), 1, 'an uncorrected decision is read when it is kept');
  t.ok((await store.forgetDecisions(new Date(Date.now() + 1000).toISOString())) > 0);
  t.equal(await store.findDecision(unreadId), undefined);
  t.equal(readings(), 0, 'its reading is forgotten with it');
  const corrections = await store.corrections('', signature);
  t.ok(
    corrections.every((c) => c.reading),
    'a correction keeps its reading when its decision is forgotten',
  );
  t.notOk(written().includes('freezes'), 'no text in the database');
});
