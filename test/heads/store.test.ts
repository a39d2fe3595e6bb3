// Fitted decision heads in both stores, each seen through two connections as two replicas see
// it: the round trip keeps every byte of the weights, a refit replaces its head, and the version
// the replicas poll changes on every save and removal.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type HeadRecord, type Store } from '../../src/store/store.js';
import { startPostgres } from '../helpers/databases.js';

const floats = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);

const head = (id: string, createdAt: string, values: number[]): HeadRecord => ({
  id,
  capability: 'classify',
  organization: '',
  signature: JSON.stringify({ labels: ['billing', 'bug', 'other'] }),
  model: 'a'.repeat(64),
  createdAt,
  examples: 24,
  meta: JSON.stringify({ outcomes: ['billing', 'bug', 'other'], accuracy: { zeroShot: 0.6, fitted: 0.8 } }),
  weights: floats(values),
});

async function roundTrip(t: Test, url: string): Promise<void> {
  const [writer, replica]: Store[] = [await openStore(url), await openStore(url)];
  t.teardown(() => Promise.all([writer.close(), replica.close()]));
  t.same(await replica.listHeads(), [], 'none at first');
  t.equal(await replica.findHead('head_0000000000000000'), undefined);
  t.equal(await writer.removeHead('head_0000000000000000'), false, 'removing an absent head says so');

  const versions = [await replica.headsVersion()];
  const later = head('head_00000000000000b2', '2026-11-28T22:10:00.000Z', [0.5, -1.25, 3e-7, 1e30]);
  const earlier = head('head_00000000000000a1', '2026-11-28T22:00:00.000Z', [1, 2, 3]);
  await writer.saveHead(later);
  versions.push(await replica.headsVersion());
  await writer.saveHead(earlier);
  versions.push(await replica.headsVersion());

  t.same(
    await replica.listHeads(),
    [earlier, later].map(({ weights: _weights, ...h }) => h),
    'listed oldest first, without weights',
  );
  const found = (await replica.findHead(later.id))!;
  t.same({ ...found, weights: [...found.weights] }, { ...later, weights: [...later.weights] }, 'every field back');
  t.equal(Buffer.compare(found.weights, later.weights), 0, 'the weights byte for byte');
  t.equal(found.weights.byteOffset, 0, 'in their own buffer');
  t.same([...new Float32Array(found.weights.buffer)], [...new Float32Array(later.weights.buffer)], 'read as Float32');

  // A refit of the same decision: same id, same count of heads, new weights and figures.
  const refit = { ...later, createdAt: '2026-11-28T22:20:00.000Z', examples: 48, weights: floats([9, 8]) };
  await writer.saveHead(refit);
  versions.push(await replica.headsVersion());
  t.equal((await replica.listHeads()).length, 2, 'replaced, not added');
  const replaced = (await replica.findHead(later.id))!;
  t.equal(replaced.examples, 48);
  t.same([...new Float32Array(replaced.weights.buffer)], [9, 8]);
  t.same(
    (await replica.listHeads()).map((h) => h.id),
    [earlier.id, later.id],
  );

  // The same record saved again still counts as a write: replicas reload, they never miss one.
  await writer.saveHead(refit);
  versions.push(await replica.headsVersion());
  t.equal(await writer.removeHead(earlier.id), true);
  versions.push(await replica.headsVersion());
  t.equal(await writer.removeHead(earlier.id), false, 'already removed');
  t.equal(await replica.headsVersion(), versions.at(-1), 'no write, no change');
  t.equal(await replica.findHead(earlier.id), undefined);
  // Back to one head of the same id as after the first save: still a new version.
  await writer.saveHead(later);
  versions.push(await replica.headsVersion());
  t.equal(new Set(versions).size, versions.length, `every write a new version: ${versions.join(' ')}`);

  // Replicas refitting at once, the same decisions too: every save lands, one row per id.
  const ids = ['head_00000000000000c1', 'head_00000000000000c2', 'head_00000000000000c3'];
  await Promise.all(
    [writer, replica].flatMap((store, n) =>
      ids.map((id, i) => store.saveHead(head(id, `2026-11-28T23:0${i}:00.000Z`, [n, i]))),
    ),
  );
  t.same(
    (await replica.listHeads()).map((h) => h.id),
    [later.id, ...ids],
  );
  t.notOk(versions.includes(await writer.headsVersion()), 'a new version after concurrent saves');
}

t.test('SQLite', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-heads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await roundTrip(t, join(dir, 'service.db'));
});

t.test('PostgreSQL', async (t) => {
  const postgres = await startPostgres();
  t.teardown(postgres.stop);
  await roundTrip(t, postgres.url);
});
