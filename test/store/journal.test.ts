// The usage journal on its own and under the ledger, on a real SQLite store: rows read back in
// the order appended, a dead process's file adopted (its torn last line left out), a replay of
// rows the store already holds writes none twice, and a full journal refuses without writing.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal, JournalFullError } from '../../src/store/journal.js';
import { Ledger } from '../../src/store/ledger.js';
import { openStore, type UsageEntry } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-journal-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const row = (i: number): UsageEntry => ({
  entryId: `entry-${i}`,
  requestId: `req-${i}`,
  keyId: 'key_0123456789abcdef',
  organization: 'acme',
  mode: 'prod',
  route: '/v1/decision-machine-1/yes-no',
  inputTokens: 10 + i,
  at: new Date(Date.UTC(2026, 11, 1, 0, 0, i)).toISOString(),
});

/** Every row the journal holds, delivered batch by batch. */
async function drain(journal: Journal, perBatch = 2): Promise<UsageEntry[]> {
  const rows: UsageEntry[] = [];
  for (let b = await journal.next(perBatch); b; b = await journal.next(perBatch)) {
    rows.push(...b.rows);
    await journal.delivered(b);
  }
  return rows;
}

t.test('rows come back in the order appended; a delivered journal is emptied, and removed on close', async (t) => {
  const at = join(dir, 'order');
  const journal = Journal.open(at, 'postgres://db:5432/a', 1 << 20);
  await Promise.all([0, 1, 2, 3, 4].map((i) => journal.append(row(i))));
  t.equal(journal.rows, 5);
  t.equal(readFileSync(journal.file, 'utf8').split('\n').length, 6, 'five lines on disk');
  t.same(
    (await drain(journal)).map((r) => r.entryId),
    ['entry-0', 'entry-1', 'entry-2', 'entry-3', 'entry-4'],
  );
  t.ok(journal.empty);
  t.equal(statSync(journal.file).size, 0, 'emptied once all is delivered');
  await journal.close();
  t.same(readdirSync(at), [], 'and removed on close');
});

t.test("a dead process's file is adopted for its own store only; a torn last line is left out", async (t) => {
  const at = join(dir, 'adopt');
  const writer = Journal.open(at, 'postgres://db:5432/a', 1 << 20);
  for (const i of [0, 1, 2]) await writer.append(row(i));
  // The same rows as a dead process would leave them (a pid that has exited), torn mid-line.
  const dead = spawnSync('true').pid!;
  const store = /usage-([0-9a-f]{16})-/.exec(writer.file)![1];
  const left = join(at, `usage-${store}-${dead}-0badcafe.journal`);
  writeFileSync(left, readFileSync(writer.file, 'utf8') + readFileSync(writer.file, 'utf8').slice(0, 40));
  await drain(writer);
  await writer.close();

  const other = Journal.open(at, 'postgres://elsewhere:5432/a', 1 << 20);
  t.equal(other.rows, 0, "another store's journal leaves it alone");
  await other.close();
  const heir = Journal.open(at, 'postgres://user:secret@db:5432/a', 1 << 20);
  t.equal(heir.rows, 3, 'adopted by a journal of the same store (user and password do not matter)');
  t.same(
    (await drain(heir)).map((r) => r.entryId),
    ['entry-0', 'entry-1', 'entry-2'],
    'its rows, without the torn end',
  );
  t.ok(heir.empty);
  await heir.close();
  t.same(readdirSync(at), [], 'the adopted file is removed once delivered');
});

t.test('rows written to the store but not marked delivered (a crash between) are written once', async (t) => {
  const at = join(dir, 'twice');
  const store = await openStore(join(dir, 'twice.db'));
  t.teardown(() => store.close());
  const first = Journal.open(at, join(dir, 'twice.db'), 1 << 20);
  for (const i of [0, 1, 2, 3]) await first.append(row(i));
  const batch = (await first.next(3))!;
  await store.recordUsage(batch.rows); // in the store, and then the process dies before delivered()
  const name = /usage-([0-9a-f]{16})-/.exec(first.file)![1];
  copyFileSync(first.file, join(at, `usage-${name}-${spawnSync('true').pid}-0dead0ff.journal`));
  await drain(first);
  await first.close();

  const ledger = new Ledger(store, Journal.open(at, join(dir, 'twice.db'), 1 << 20));
  await ledger.close(); // close delivers what the journal holds
  const [total] = await store.usage();
  t.equal(total!.requests, 4, 'four rows, none twice');
  t.equal(total!.inputTokens, 10 + 11 + 12 + 13);
  t.same(readdirSync(at), []);
});

t.test('a full journal refuses the row and writes nothing', async (t) => {
  const journal = Journal.open(join(dir, 'full'), 'postgres://db:5432/a', 300);
  await journal.append(row(0));
  const size = statSync(journal.file).size;
  await t.rejects(journal.append(row(1)), JournalFullError);
  t.equal(statSync(journal.file).size, size, 'the file is as it was');
  t.ok(journal.refusedRecently(1000), 'and says so');
  t.equal(journal.rows, 1);
  await drain(journal);
  await journal.close();
});
