// What decisions that learn from use keep, in both stores, each seen through two connections as
// two replicas see it: decisions kept in the usage row's transaction (and forgotten after the
// retention), corrections replaced by a second one of the same decision, each correction's reading
// (its features, bit for bit), the refit lease held by
// one replica at a time, and a head's previous version restored by rollback.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type HeadRecord, type Store, type UsageEntry } from '../../src/store/store.js';
import { startPostgres } from '../helpers/databases.js';

const floats = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);
const head = (createdAt: string, values: number[]): HeadRecord => ({
  id: 'head_00000000000000c3',
  capability: 'classify',
  organization: 'acme',
  signature: JSON.stringify({ capability: 'classify', labels: ['red', 'blue'] }),
  model: 'a'.repeat(64),
  createdAt,
  examples: 16,
  meta: '{}',
  weights: floats(values),
});
const entry = (n: number, at: string): UsageEntry => ({
  entryId: `e${n}`,
  requestId: `r${n}`,
  keyId: 'k',
  organization: 'acme',
  mode: 'prod',
  route: '/v1/decision-machine-1/classify',
  inputTokens: 10,
  at,
  decisions: [
    {
      id: `dec_${n}`,
      organization: 'acme',
      capability: 'classify',
      line: '{}',
      answer: '{"label":"red"}',
      head: '',
      at,
    },
  ],
});

async function kept(t: Test, url: string): Promise<void> {
  const [a, b]: Store[] = [await openStore(url), await openStore(url)];
  t.teardown(() => Promise.all([a.close(), b.close()]));

  await a.recordUsage([entry(1, '2026-11-01T00:00:00.000Z'), entry(2, '2026-12-01T00:00:00.000Z')]);
  await a.recordUsage([entry(2, '2026-12-01T00:00:00.000Z')]); // a journal replay: kept once
  t.match(await b.findDecision('dec_2'), {
    organization: 'acme',
    answer: '{"label":"red"}',
    at: '2026-12-01T00:00:00.000Z',
  });
  t.equal(await b.forgetDecisions('2026-11-15T00:00:00.000Z'), 1, 'the decision past the retention is forgotten');
  t.equal(await b.findDecision('dec_1'), undefined);
  t.ok(await b.findDecision('dec_2'));

  const correction = {
    id: 'dec_2',
    organization: 'acme',
    signature: 'head_s',
    line: '{"expect":1}',
    head: 'head_h',
    right: false,
    at: '2026-12-01T00:01:00.000Z',
  };
  await a.saveCorrection(correction);
  await a.saveCorrection({ ...correction, line: '{"expect":2}', right: true, at: '2026-12-01T00:02:00.000Z' });
  await a.saveCorrection({ ...correction, id: 'cor_1', head: '', right: null });
  t.same(
    (await b.corrections('acme', 'head_s')).map((c) => [c.id, c.line, c.right]),
    [
      ['cor_1', '{"expect":1}', null],
      ['dec_2', '{"expect":2}', true],
    ],
    'a second correction of a decision replaces the first',
  );
  t.same(await b.corrections('globex', 'head_s'), [], "another organization's are its own");
  t.equal(await b.countCorrections('acme', 'head_s'), 2);
  t.equal(await b.countCorrections('globex', 'head_s'), 0);

  const reading = {
    model: `${'a'.repeat(64)}:r1`,
    hidden: new Float32Array([0.5, -1.25, 3]),
    base: [-0.1, -2.3],
    route: 1,
  };
  await a.saveReading('dec_2', reading);
  await a.saveReading('dec_2', { ...reading, route: 0 }); // read again (another model): replaced
  const [unread, read] = await b.corrections('acme', 'head_s');
  t.equal(unread!.reading, undefined, 'a correction not read yet has no reading');
  t.same(
    [read!.reading!.model, [...read!.reading!.hidden], read!.reading!.base, read!.reading!.route],
    [reading.model, [0.5, -1.25, 3], [-0.1, -2.3], 0],
    "a correction's reading kept beside it, the features bit for bit",
  );
  t.same(await b.headAccuracy('head_h', '2026-12-01T00:00:00.000Z'), { right: 1, judged: 1 });
  t.same(await b.headAccuracy('head_h', '2026-12-02T00:00:00.000Z'), { right: 0, judged: 0 }, 'only since the fit');

  t.equal(await a.takeLease('refit:acme:head_s', 'replica-a', 60_000), true, 'a takes the lease');
  t.equal(await b.takeLease('refit:acme:head_s', 'replica-b', 60_000), false, 'b is refused while a holds it');
  t.equal(await a.takeLease('refit:acme:head_s', 'replica-a', 60_000), true, 'a renews its own');
  await a.releaseLease('refit:acme:head_s', 'replica-a');
  t.equal(await b.takeLease('refit:acme:head_s', 'replica-b', 1), true, 'b takes it once released');
  await new Promise((r) => setTimeout(r, 20));
  t.equal(
    await a.takeLease('refit:acme:head_s', 'replica-a', 60_000),
    true,
    "an expired lease (a dead replica's) is taken",
  );

  const first = head('2026-12-01T00:00:00.000Z', [1, 2]);
  t.equal(await a.rollbackHead(first.id), false, 'no previous version yet');
  await a.saveHead(first);
  await a.saveHead(head('2026-12-01T01:00:00.000Z', [3, 4]));
  const version = await b.headsVersion();
  t.equal(await a.rollbackHead(first.id), true);
  t.not(await b.headsVersion(), version, 'a rollback is a change the replicas see');
  const back = (await b.findHead(first.id))!;
  t.same(
    [back.createdAt, [...new Float32Array(back.weights.buffer)], back.organization],
    [first.createdAt, [1, 2], 'acme'],
  );
  t.equal(await a.rollbackHead(first.id), false, 'one version back, once');
}

t.test('SQLite', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-feedback-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await kept(t, join(dir, 'service.db'));
});

t.test('PostgreSQL', async (t) => {
  const postgres = await startPostgres();
  t.teardown(postgres.stop);
  await kept(t, postgres.url);
});
