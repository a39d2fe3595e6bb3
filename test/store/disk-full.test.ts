// A full disk under the journal and under the SQLite store, on a small tmpfs: answers go on
// where their usage can still be recorded, an answer whose row nothing can take is withheld
// (503 store_unavailable) with a clear log line and metric, and nothing is half-written. Needs
// root to mount the tmpfs; skipped otherwise.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { issueKey } from '../../src/auth/keys.js';
import type { Logger } from '../../src/log.js';
import { startGatedServer, type GatedServer } from '../helpers/gated-server.js';
import { startPostgres } from '../helpers/databases.js';

const YES_NO = '/v1/decision-machine-1/yes-no';
const BODY = JSON.stringify({ text: 'The parcel arrived on Monday.', statement: 'The parcel arrived.' });

const disk = mkdtempSync(join(tmpdir(), 'dm-disk-full-'));
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk], { stdio: 'ignore' });
  mounted = true;
} catch {
  // not root, or no mount in this container
}
t.teardown(() => {
  if (mounted) execFileSync('umount', ['-l', disk]);
  rmSync(disk, { recursive: true, force: true });
});

/** Fills the tmpfs to the last byte; returns a function that frees it again. */
function fill(): () => void {
  const filler = join(disk, `filler-${Date.now()}`);
  let bytes = 1 << 20;
  for (let i = 0; bytes >= 1; i++) {
    try {
      writeFileSync(`${filler}-${i}`, Buffer.alloc(bytes));
    } catch {
      bytes = Math.floor(bytes / 2);
    }
  }
  return () => readdirSync(disk).forEach((f) => f.startsWith('filler-') && rmSync(join(disk, f)));
}

function collecting(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const push = (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`);
  return { lines, info: push, warn: push, error: push };
}

const call = (server: GatedServer, key: string) =>
  fetch(server.url + YES_NO, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: BODY });

const metric = async (server: GatedServer, name: string) =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(server.url + '/metrics')).text())?.[1]);

/** Every line of every journal file in `dir` ends with a newline and checks as JSON. */
function wholeLines(dir: string): boolean {
  return readdirSync(dir).every((f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    return (
      text === '' ||
      (text.endsWith('\n') &&
        text
          .trimEnd()
          .split('\n')
          .every((l) => JSON.parse(l.slice(9))))
    );
  });
}

t.test('the journal disk full while PostgreSQL is away', { skip: !mounted && 'needs root for a tmpfs' }, async (t) => {
  const postgres = await startPostgres();
  t.teardown(postgres.stop);
  const journalDir = join(disk, 'journal');
  const log = collecting();
  const server = await startGatedServer(
    { auth: 'on', databaseUrl: postgres.url, rateLimit: 0, journalDir },
    {},
    {},
    log,
  );
  t.teardown(server.close);
  const { key, record } = await issueKey(server.access.store, 'prod', 'acme');
  t.equal((await call(server, key)).status, 200, 'answered and recorded in PostgreSQL');
  await postgres.halt('SIGINT');
  t.equal((await call(server, key)).status, 200, 'database away: answered, the row journalled');
  const free = fill();
  t.teardown(free);
  // The journal's last page has room for a few more rows: call until a row needs a new one.
  let answered = 2;
  let withheld = await call(server, key);
  for (; withheld.status === 200 && answered < 200; withheld = await call(server, key)) answered++;
  const body = (await withheld.json()) as any;
  t.equal(withheld.status, 503, 'disk full too: the answer is withheld');
  t.equal(body.error.code, 'store_unavailable');
  t.equal(withheld.headers.get('retry-after'), '5');
  t.ok(
    log.lines.some((l) => l.startsWith('usage not recorded: answer withheld') && /ENOSPC/.test(l)),
    'a clear log line naming the full disk',
  );
  t.equal(await metric(server, 'dm_usage_unrecorded_total'), 1, 'and a metric');
  const refused = await call(server, key);
  t.equal(refused.status, 503, 'the next call is refused before it runs');
  t.ok(wholeLines(journalDir), 'the journal holds only whole lines');
  t.comment(`${answered} answers before the disk refused the journal`);

  free();
  await new Promise((r) => setTimeout(r, 1100)); // the journal is tried again a second after a refusal
  t.equal((await call(server, key)).status, 200, 'space again: answered, journalled');
  await postgres.restart();
  const rows = async () => (await server.access.store.usage()).find((u) => u.keyId === record.id)?.requests;
  const started = Date.now();
  while ((await rows().catch(() => 0)) !== answered + 1 && Date.now() - started < 10_000)
    await new Promise((r) => setTimeout(r, 100));
  t.equal(await rows(), answered + 1, 'the ledger holds every answer delivered, not the withheld one');
});

t.test(
  'the SQLite store disk full: answers go on, rows journalled elsewhere',
  { skip: !mounted && 'needs root for a tmpfs' },
  async (t) => {
    const database = join(disk, 'service.db');
    const journalDir = mkdtempSync(join(tmpdir(), 'dm-journal-'));
    t.teardown(() => rmSync(journalDir, { recursive: true, force: true }));
    const log = collecting();
    const server = await startGatedServer({ auth: 'on', databaseUrl: database, rateLimit: 0, journalDir }, {}, {}, log);
    t.teardown(server.close);
    const { key, record } = await issueKey(server.access.store, 'prod', 'acme');
    t.equal((await call(server, key)).status, 200);
    const free = fill();
    // SQLite reuses free pages of its file and WAL: call until a write needs a new one.
    const statuses: number[] = [];
    while ((await metric(server, 'dm_usage_journalled_total')) === 0 && statuses.length < 2000)
      statuses.push((await call(server, key)).status);
    t.ok(
      statuses.every((s) => s === 200),
      `${statuses.length} calls on the full disk, all answered`,
    );
    t.ok(
      log.lines.some((l) => l.startsWith('store unavailable') && /full/i.test(l)),
      'the log says the store failed, and why',
    );
    free();
    const started = Date.now();
    while ((await metric(server, 'dm_journal_rows')) > 0 && Date.now() - started < 10_000)
      await new Promise((r) => setTimeout(r, 100));
    const db = new Database(database, { readonly: true });
    t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'no corrupt store');
    const { n } = db.prepare('SELECT COUNT(*) AS n FROM usage WHERE key_id = ?').get(record.id) as { n: number };
    db.close();
    t.equal(n, statuses.length + 1, 'every answer delivered is in the ledger once space is back');
  },
);
