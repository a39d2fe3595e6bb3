// The embedded store: one SQLite file (WAL, so the operator CLI can issue and revoke while the
// service runs). better-sqlite3 is synchronous; each call is a few microseconds on an index.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { readingBytes, readingHidden } from './store.js';
import type { Correction, CorrectionReading, HeadRecord, KeptDecision, KeyRecord, Store } from './store.js';
import type { UsageEntry, UsageTotal } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, hash TEXT NOT NULL, mode TEXT NOT NULL, organization TEXT NOT NULL,
  name TEXT NOT NULL, hint TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS usage (
  id INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, key_id TEXT NOT NULL,
  organization TEXT NOT NULL, mode TEXT NOT NULL, route TEXT NOT NULL,
  input_tokens INTEGER NOT NULL, at TEXT NOT NULL, entry_id TEXT
);
CREATE INDEX IF NOT EXISTS usage_at ON usage (at);
CREATE TABLE IF NOT EXISTS decision_heads (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, capability TEXT NOT NULL,
  signature TEXT NOT NULL, model TEXT NOT NULL, created_at TEXT NOT NULL, examples INTEGER NOT NULL,
  meta TEXT NOT NULL, weights BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS previous_heads (
  id TEXT PRIMARY KEY, capability TEXT NOT NULL, signature TEXT NOT NULL, model TEXT NOT NULL,
  created_at TEXT NOT NULL, examples INTEGER NOT NULL, meta TEXT NOT NULL, weights BLOB NOT NULL,
  organization TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kept_decisions (
  id TEXT PRIMARY KEY, organization TEXT NOT NULL, capability TEXT NOT NULL, line TEXT NOT NULL,
  answer TEXT NOT NULL, head TEXT NOT NULL, at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS kept_decisions_at ON kept_decisions (at);
CREATE TABLE IF NOT EXISTS corrections (
  id TEXT PRIMARY KEY, organization TEXT NOT NULL, signature TEXT NOT NULL, line TEXT NOT NULL,
  head TEXT NOT NULL, was_right INTEGER, at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_head ON corrections (head);
CREATE INDEX IF NOT EXISTS corrections_signature ON corrections (organization, signature);
CREATE TABLE IF NOT EXISTS correction_readings (
  id TEXT PRIMARY KEY, model TEXT NOT NULL, hidden BLOB NOT NULL, base TEXT NOT NULL, route INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
`;

// A kept decision's reading (DM_FEEDBACK_TEXTS=hash) goes with it unless a correction took it over.
const FORGET_UNCORRECTED_READINGS = `DELETE FROM correction_readings
  WHERE id NOT IN (SELECT id FROM corrections) AND id NOT IN (SELECT id FROM kept_decisions)`;

const KEY_COLUMNS = `id, hash, mode, organization, name, hint, created_at AS createdAt, revoked_at AS revokedAt`;
const HEAD_COLUMNS = `id, capability, signature, model, created_at AS createdAt, examples, meta, organization`;
const HEAD_FIELDS = 'id, capability, signature, model, created_at, examples, meta, weights, organization';
const DECISION_COLUMNS = 'id, organization, capability, line, answer, head, at';
type HeadSummary = Omit<HeadRecord, 'weights'>;
/** A correction's reading columns (all null when none is kept). */
type ReadingRow = { model: string | null; hidden: Buffer | null; base: string | null; route: number | null };

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private constructor(private readonly db: Database.Database) {}

  static async open(path: string): Promise<SqliteStore> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    // Files made before entry_id existed get the column (their old rows keep NULL, which the
    // unique index allows any number of times).
    const columns = db.prepare("SELECT name FROM pragma_table_info('usage')").pluck().all();
    if (!columns.includes('entry_id')) db.exec('ALTER TABLE usage ADD COLUMN entry_id TEXT');
    db.exec('CREATE UNIQUE INDEX IF NOT EXISTS usage_entry ON usage (entry_id)');
    // Heads stored before organizations could teach their own are the deployment's ('').
    const headColumns = db.prepare("SELECT name FROM pragma_table_info('decision_heads')").pluck().all();
    if (!headColumns.includes('organization'))
      db.exec("ALTER TABLE decision_heads ADD COLUMN organization TEXT NOT NULL DEFAULT ''");
    return new SqliteStore(db);
  }

  async addKey(k: KeyRecord): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO api_keys (id, hash, mode, organization, name, hint, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(k.id, k.hash, k.mode, k.organization, k.name, k.hint, k.createdAt, k.revokedAt);
  }

  async findKey(id: string): Promise<KeyRecord | undefined> {
    return this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id) as KeyRecord | undefined;
  }

  async listKeys(): Promise<KeyRecord[]> {
    return this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at`).all() as KeyRecord[];
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    return (
      this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes ===
      1
    );
  }

  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    const insert = this.db.prepare(
      'INSERT OR IGNORE INTO usage (entry_id, request_id, key_id, organization, mode, route, input_tokens, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const keep = this.db.prepare(
      `INSERT OR IGNORE INTO kept_decisions (${DECISION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      for (const u of entries) {
        insert.run(u.entryId, u.requestId, u.keyId, u.organization, u.mode, u.route, u.inputTokens, u.at);
        for (const d of u.decisions ?? []) keep.run(d.id, d.organization, d.capability, d.line, d.answer, d.head, d.at);
      }
    })();
  }

  async findDecision(id: string): Promise<KeptDecision | undefined> {
    return this.db.prepare(`SELECT ${DECISION_COLUMNS} FROM kept_decisions WHERE id = ?`).get(id) as
      KeptDecision | undefined;
  }

  async forgetDecisions(before: string): Promise<number> {
    const forget = this.db.transaction(() => {
      const n = this.db.prepare('DELETE FROM kept_decisions WHERE at < ?').run(normalise(before)).changes;
      this.db.prepare(FORGET_UNCORRECTED_READINGS).run();
      return n;
    });
    return forget();
  }

  async saveCorrection(c: Correction): Promise<void> {
    this.db
      .prepare(
        'INSERT OR REPLACE INTO corrections (id, organization, signature, line, head, was_right, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        c.id,
        c.organization,
        c.signature,
        c.line,
        c.head,
        c.right === null ? null : Number(c.right),
        normalise(c.at),
      );
  }

  async corrections(organization: string, signature: string): Promise<Correction[]> {
    const rows = this.db
      .prepare(
        `SELECT c.id, organization, signature, line, head, was_right AS "right", at,
           r.model, r.hidden, r.base, r.route
         FROM corrections c LEFT JOIN correction_readings r ON r.id = c.id
         WHERE organization = ? AND signature = ? ORDER BY at, c.id`,
      )
      .all(organization, signature) as (Omit<Correction, 'right' | 'reading'> & {
      right: number | null;
    } & ReadingRow)[];
    return rows.map(({ model, hidden, base, route, ...r }) => ({
      ...r,
      right: r.right === null ? null : r.right === 1,
      ...(model === null
        ? {}
        : { reading: { model, hidden: readingHidden(hidden!), base: JSON.parse(base!), route: route! } }),
    }));
  }

  async countCorrections(organization: string, signature: string): Promise<number> {
    return (
      this.db
        .prepare('SELECT COUNT(*) AS n FROM corrections WHERE organization = ? AND signature = ?')
        .get(organization, signature) as { n: number }
    ).n;
  }

  async saveReading(id: string, r: CorrectionReading): Promise<void> {
    this.db
      .prepare('INSERT OR REPLACE INTO correction_readings (id, model, hidden, base, route) VALUES (?, ?, ?, ?, ?)')
      .run(id, r.model, readingBytes(r.hidden), JSON.stringify(r.base), r.route);
  }

  async headAccuracy(head: string, since: string): Promise<{ right: number; judged: number }> {
    return this.db
      .prepare(
        'SELECT COALESCE(SUM(was_right), 0) AS "right", COUNT(was_right) AS judged FROM corrections WHERE head = ? AND at >= ?',
      )
      .get(head, normalise(since)) as { right: number; judged: number };
  }

  async takeLease(name: string, holder: string, ms: number): Promise<boolean> {
    const now = Date.now();
    const taken = this.db
      .prepare(
        `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.expires_at < ? OR leases.holder = excluded.holder`,
      )
      .run(name, holder, now + ms, now);
    return taken.changes === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?').run(name, holder);
  }

  async usage(range: { since?: string; until?: string } = {}): Promise<UsageTotal[]> {
    return this.db
      .prepare(
        `SELECT organization, key_id AS keyId, mode, COUNT(*) AS requests, SUM(input_tokens) AS inputTokens FROM usage
         WHERE at >= ? AND at < ? GROUP BY organization, key_id, mode ORDER BY organization, key_id`,
      )
      .all(normalise(range.since) ?? '', normalise(range.until) ?? '9999') as UsageTotal[];
  }

  // REPLACE deletes the row with the same id and inserts a new one: AUTOINCREMENT gives it a
  // sequence number higher than any ever used, which headsVersion() reads.
  // The replaced head becomes the previous version, in the same transaction.
  async saveHead(h: HeadRecord): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare(`INSERT OR REPLACE INTO previous_heads SELECT ${HEAD_FIELDS} FROM decision_heads WHERE id = ?`)
        .run(h.id);
      this.db
        .prepare(`INSERT OR REPLACE INTO decision_heads (${HEAD_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(
          h.id,
          h.capability,
          h.signature,
          h.model,
          new Date(h.createdAt).toISOString(),
          h.examples,
          h.meta,
          Buffer.from(h.weights.buffer, h.weights.byteOffset, h.weights.byteLength),
          h.organization,
        );
    })();
  }

  async rollbackHead(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const put = this.db
        .prepare(
          `INSERT OR REPLACE INTO decision_heads (${HEAD_FIELDS}) SELECT ${HEAD_FIELDS} FROM previous_heads WHERE id = ?`,
        )
        .run(id);
      this.db.prepare('DELETE FROM previous_heads WHERE id = ?').run(id);
      return put.changes === 1;
    })();
  }

  async listHeads(): Promise<HeadSummary[]> {
    return this.db.prepare(`SELECT ${HEAD_COLUMNS} FROM decision_heads ORDER BY created_at, id`).all() as HeadSummary[];
  }

  async findHead(id: string): Promise<HeadRecord | undefined> {
    const row = this.db.prepare(`SELECT ${HEAD_COLUMNS}, weights FROM decision_heads WHERE id = ?`).get(id) as
      (HeadSummary & { weights: Buffer }) | undefined;
    return row && { ...row, weights: new Uint8Array(row.weights) };
  }

  async removeHead(id: string): Promise<boolean> {
    this.db.prepare('DELETE FROM previous_heads WHERE id = ?').run(id);
    return this.db.prepare('DELETE FROM decision_heads WHERE id = ?').run(id).changes === 1;
  }

  async headsVersion(): Promise<string> {
    const row = this.db.prepare('SELECT COUNT(*) AS n, COALESCE(MAX(seq), 0) AS seq FROM decision_heads').get();
    const { n, seq } = row as { n: number; seq: number };
    return `${n}:${seq}`;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

// Rows hold toISOString() text, so bounds must be in the same form to compare as text.
function normalise(at: string | undefined): string | undefined {
  return at === undefined ? undefined : new Date(at).toISOString();
}
