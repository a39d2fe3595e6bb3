// The shared store for several replicas: PostgreSQL through a small connection pool.
import pg from 'pg';
import { readingBytes, readingHidden } from './store.js';
import type { Correction, CorrectionReading, HeadRecord, KeptDecision, KeyRecord, Store } from './store.js';
import type { UsageEntry, UsageTotal } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS api_keys (
  id text PRIMARY KEY, hash text NOT NULL, mode text NOT NULL, organization text NOT NULL,
  name text NOT NULL, hint text NOT NULL, created_at timestamptz NOT NULL, revoked_at timestamptz
);
CREATE TABLE IF NOT EXISTS usage (
  id bigserial PRIMARY KEY, request_id text NOT NULL, key_id text NOT NULL,
  organization text NOT NULL, mode text NOT NULL, route text NOT NULL,
  input_tokens integer NOT NULL, at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_at ON usage (at);
ALTER TABLE usage ADD COLUMN IF NOT EXISTS entry_id text;
CREATE UNIQUE INDEX IF NOT EXISTS usage_entry ON usage (entry_id);
CREATE TABLE IF NOT EXISTS decision_heads (
  seq bigserial NOT NULL, id text PRIMARY KEY, capability text NOT NULL, signature text NOT NULL,
  model text NOT NULL, created_at timestamptz NOT NULL, examples integer NOT NULL, meta text NOT NULL,
  weights bytea NOT NULL
);
ALTER TABLE decision_heads ADD COLUMN IF NOT EXISTS organization text NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS previous_heads (
  id text PRIMARY KEY, capability text NOT NULL, signature text NOT NULL, model text NOT NULL,
  created_at timestamptz NOT NULL, examples integer NOT NULL, meta text NOT NULL, weights bytea NOT NULL,
  organization text NOT NULL
);
CREATE TABLE IF NOT EXISTS kept_decisions (
  id text PRIMARY KEY, organization text NOT NULL, capability text NOT NULL, line text NOT NULL,
  answer text NOT NULL, head text NOT NULL, at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS kept_decisions_at ON kept_decisions (at);
CREATE TABLE IF NOT EXISTS corrections (
  id text PRIMARY KEY, organization text NOT NULL, signature text NOT NULL, line text NOT NULL,
  head text NOT NULL, was_right boolean, at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_head ON corrections (head);
CREATE INDEX IF NOT EXISTS corrections_signature ON corrections (organization, signature);
CREATE TABLE IF NOT EXISTS correction_readings (
  id text PRIMARY KEY, model text NOT NULL, hidden bytea NOT NULL, base text NOT NULL, route integer NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL);
`;
/** A correction's reading columns (all null when none is kept). */
type ReadingRow = { model: string | null; hidden: Buffer | null; base: string | null; route: number | null };

// Replicas starting together would race on CREATE TABLE IF NOT EXISTS; one at a time.
const SCHEMA_LOCK = 0x646d31; // "dm1"

interface KeyRow {
  id: string;
  hash: string;
  mode: KeyRecord['mode'];
  organization: string;
  name: string;
  hint: string;
  created_at: Date;
  revoked_at: Date | null;
}

const toRecord = (r: KeyRow): KeyRecord => ({
  id: r.id,
  hash: r.hash,
  mode: r.mode,
  organization: r.organization,
  name: r.name,
  hint: r.hint,
  createdAt: r.created_at.toISOString(),
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

interface HeadRow {
  id: string;
  capability: string;
  signature: string;
  model: string;
  created_at: Date;
  examples: number;
  meta: string;
  organization: string;
  weights?: Buffer;
}

const HEAD_COLUMNS = 'id, capability, signature, model, created_at, examples, meta, organization';
const HEAD_FIELDS = `${HEAD_COLUMNS}, weights`;

const toHead = (r: HeadRow): Omit<HeadRecord, 'weights'> => ({
  id: r.id,
  capability: r.capability,
  signature: r.signature,
  model: r.model,
  createdAt: r.created_at.toISOString(),
  examples: r.examples,
  meta: r.meta,
  organization: r.organization,
});

const iso = (at: Date | string) => (at instanceof Date ? at.toISOString() : at);

export class PostgresStore implements Store {
  readonly kind = 'postgres';
  private schema: Promise<void> | undefined;
  private constructor(private readonly pool: pg.Pool) {}

  /**
   * Never waits for the server: the tables are made by the first call that reaches it (a call
   * while it is away rejects, and the next one tries again), so a service can start without it.
   */
  static async open(url: string): Promise<PostgresStore> {
    // Bounded waits, so that a server that stops answering (rather than refusing) cannot hold
    // a request or a replay for long.
    const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 3000, query_timeout: 10_000 });
    pool.on('error', () => {}); // an idle client's broken connection is replaced on next use
    return new PostgresStore(pool);
  }

  private ready(): Promise<void> {
    this.schema ??= this.makeSchema().catch((err: unknown) => {
      this.schema = undefined;
      throw err;
    });
    return this.schema;
  }

  private async makeSchema(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK]);
      await client.query(SCHEMA);
      await client.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK]);
    } finally {
      client.release();
    }
  }

  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready();
    return this.pool.query<R>(text, values);
  }

  async addKey(k: KeyRecord): Promise<void> {
    await this.query(
      'INSERT INTO api_keys (id, hash, mode, organization, name, hint, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [k.id, k.hash, k.mode, k.organization, k.name, k.hint, k.createdAt, k.revokedAt],
    );
  }

  async findKey(id: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0] && toRecord(rows[0]);
  }

  async listKeys(): Promise<KeyRecord[]> {
    const { rows } = await this.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at');
    return rows.map(toRecord);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    const res = await this.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
    return res.rowCount === 1;
  }

  // One transaction: every row and its kept decisions, or none.
  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    const column = <K extends keyof UsageEntry>(k: K) => entries.map((u) => u[k]);
    const kept = entries.flatMap((u) => u.decisions ?? []);
    const field = <K extends keyof KeptDecision>(k: K) => kept.map((d) => d[k]);
    await this.transaction(async (client) => {
      await client.query(
        `INSERT INTO usage (entry_id, request_id, key_id, organization, mode, route, input_tokens, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::timestamptz[])
         ON CONFLICT (entry_id) DO NOTHING`,
        [
          column('entryId'),
          column('requestId'),
          column('keyId'),
          column('organization'),
          column('mode'),
          column('route'),
          column('inputTokens'),
          column('at'),
        ],
      );
      if (kept.length === 0) return;
      await client.query(
        `INSERT INTO kept_decisions (id, organization, capability, line, answer, head, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         ON CONFLICT (id) DO NOTHING`,
        [
          field('id'),
          field('organization'),
          field('capability'),
          field('line'),
          field('answer'),
          field('head'),
          field('at'),
        ],
      );
    });
  }

  async findDecision(id: string): Promise<KeptDecision | undefined> {
    const { rows } = await this.query<KeptDecision & { at: Date }>(
      'SELECT id, organization, capability, line, answer, head, at FROM kept_decisions WHERE id = $1',
      [id],
    );
    return rows[0] && { ...rows[0], at: iso(rows[0].at) };
  }

  async forgetDecisions(before: string): Promise<number> {
    const forgotten = await this.query('DELETE FROM kept_decisions WHERE at < $1', [before]);
    // A kept decision's reading (DM_FEEDBACK_TEXTS=hash) goes with it unless a correction took it over.
    await this.query(`DELETE FROM correction_readings r
      WHERE NOT EXISTS (SELECT 1 FROM corrections c WHERE c.id = r.id)
        AND NOT EXISTS (SELECT 1 FROM kept_decisions d WHERE d.id = r.id)`);
    return forgotten.rowCount ?? 0;
  }

  async saveCorrection(c: Correction): Promise<void> {
    await this.query(
      `INSERT INTO corrections (id, organization, signature, line, head, was_right, at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET organization = EXCLUDED.organization, signature = EXCLUDED.signature,
         line = EXCLUDED.line, head = EXCLUDED.head, was_right = EXCLUDED.was_right, at = EXCLUDED.at`,
      [c.id, c.organization, c.signature, c.line, c.head, c.right, c.at],
    );
  }

  async corrections(organization: string, signature: string): Promise<Correction[]> {
    const { rows } = await this.query<Omit<Correction, 'reading'> & { at: Date } & ReadingRow>(
      `SELECT c.id, organization, signature, line, head, was_right AS "right", at, r.model, r.hidden, r.base, r.route
       FROM corrections c LEFT JOIN correction_readings r ON r.id = c.id
       WHERE organization = $1 AND signature = $2 ORDER BY at, c.id`,
      [organization, signature],
    );
    return rows.map(({ model, hidden, base, route, ...r }) => ({
      ...r,
      at: iso(r.at),
      ...(model === null
        ? {}
        : { reading: { model, hidden: readingHidden(hidden!), base: JSON.parse(base!), route: route! } }),
    }));
  }

  async countCorrections(organization: string, signature: string): Promise<number> {
    const { rows } = await this.query<{ n: number }>(
      'SELECT COUNT(*)::int AS n FROM corrections WHERE organization = $1 AND signature = $2',
      [organization, signature],
    );
    return rows[0]!.n;
  }

  async saveReading(id: string, r: CorrectionReading): Promise<void> {
    await this.query(
      `INSERT INTO correction_readings (id, model, hidden, base, route) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, hidden = EXCLUDED.hidden, base = EXCLUDED.base,
         route = EXCLUDED.route`,
      [id, r.model, readingBytes(r.hidden), JSON.stringify(r.base), r.route],
    );
  }

  async headAccuracy(head: string, since: string): Promise<{ right: number; judged: number }> {
    const { rows } = await this.query<{ right: number; judged: number }>(
      `SELECT COUNT(*) FILTER (WHERE was_right)::int AS "right", COUNT(was_right)::int AS judged
       FROM corrections WHERE head = $1 AND at >= $2`,
      [head, since],
    );
    return rows[0]!;
  }

  async takeLease(name: string, holder: string, ms: number): Promise<boolean> {
    const res = await this.query(
      `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE leases.expires_at < now() OR leases.holder = EXCLUDED.holder`,
      [name, holder, ms],
    );
    return res.rowCount === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
  }

  private async transaction(body: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    await this.ready();
    const client = await this.pool.connect();
    // A connection lost while checked out emits 'error' on the client (the pool's handler covers idle
    // ones only); the query under way rejects with it, so the caller learns of it there, and the
    // connection is destroyed rather than given back to the pool.
    let failed = false;
    const lost = () => (failed = true);
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      await body(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (failed = true));
      throw err;
    } finally {
      client.off('error', lost);
      client.release(failed);
    }
  }

  async usage(range: { since?: string; until?: string } = {}): Promise<UsageTotal[]> {
    const { rows } = await this.query<{
      organization: string;
      key_id: string;
      mode: string;
      requests: number;
      tokens: string;
    }>(
      `SELECT organization, key_id, mode, COUNT(*)::int AS requests, SUM(input_tokens)::bigint AS tokens FROM usage
       WHERE at >= COALESCE($1::timestamptz, '-infinity') AND at < COALESCE($2::timestamptz, 'infinity')
       GROUP BY organization, key_id, mode ORDER BY organization, key_id`,
      [range.since ?? null, range.until ?? null],
    );
    return rows.map((r) => ({
      organization: r.organization,
      keyId: r.key_id,
      mode: r.mode,
      requests: r.requests,
      inputTokens: Number(r.tokens),
    }));
  }

  // Saves hold the table's write lock until they commit, so sequence numbers are taken in commit
  // order: a poller can never see a later number before an earlier one (see headsVersion). The
  // replaced head becomes the previous version in the same transaction.
  async saveHead(h: HeadRecord): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('LOCK TABLE decision_heads IN SHARE ROW EXCLUSIVE MODE');
      await client.query(
        `INSERT INTO previous_heads (${HEAD_FIELDS}) SELECT ${HEAD_FIELDS} FROM decision_heads WHERE id = $1
         ON CONFLICT (id) DO UPDATE SET capability = EXCLUDED.capability, signature = EXCLUDED.signature,
           model = EXCLUDED.model, created_at = EXCLUDED.created_at, examples = EXCLUDED.examples,
           meta = EXCLUDED.meta, weights = EXCLUDED.weights, organization = EXCLUDED.organization`,
        [h.id],
      );
      await client.query(
        `INSERT INTO decision_heads (${HEAD_FIELDS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (id) DO UPDATE SET seq = DEFAULT, capability = EXCLUDED.capability,
           signature = EXCLUDED.signature, model = EXCLUDED.model, created_at = EXCLUDED.created_at,
           examples = EXCLUDED.examples, meta = EXCLUDED.meta, weights = EXCLUDED.weights,
           organization = EXCLUDED.organization`,
        [
          h.id,
          h.capability,
          h.signature,
          h.model,
          h.createdAt,
          h.examples,
          h.meta,
          h.organization,
          Buffer.from(h.weights.buffer, h.weights.byteOffset, h.weights.byteLength),
        ],
      );
    });
  }

  async rollbackHead(id: string): Promise<boolean> {
    let restored = false;
    await this.transaction(async (client) => {
      await client.query('LOCK TABLE decision_heads IN SHARE ROW EXCLUSIVE MODE');
      const res = await client.query(
        `INSERT INTO decision_heads (${HEAD_FIELDS}) SELECT ${HEAD_FIELDS} FROM previous_heads WHERE id = $1
         ON CONFLICT (id) DO UPDATE SET seq = DEFAULT, capability = EXCLUDED.capability,
           signature = EXCLUDED.signature, model = EXCLUDED.model, created_at = EXCLUDED.created_at,
           examples = EXCLUDED.examples, meta = EXCLUDED.meta, weights = EXCLUDED.weights,
           organization = EXCLUDED.organization`,
        [id],
      );
      await client.query('DELETE FROM previous_heads WHERE id = $1', [id]);
      restored = res.rowCount === 1;
    });
    return restored;
  }

  async listHeads(): Promise<Omit<HeadRecord, 'weights'>[]> {
    const { rows } = await this.query<HeadRow>(`SELECT ${HEAD_COLUMNS} FROM decision_heads ORDER BY created_at, id`);
    return rows.map(toHead);
  }

  async findHead(id: string): Promise<HeadRecord | undefined> {
    const { rows } = await this.query<HeadRow>(`SELECT ${HEAD_COLUMNS}, weights FROM decision_heads WHERE id = $1`, [
      id,
    ]);
    return rows[0] && { ...toHead(rows[0]), weights: new Uint8Array(rows[0].weights!) };
  }

  async removeHead(id: string): Promise<boolean> {
    await this.query('DELETE FROM previous_heads WHERE id = $1', [id]);
    return (await this.query('DELETE FROM decision_heads WHERE id = $1', [id])).rowCount === 1;
  }

  async headsVersion(): Promise<string> {
    const { rows } = await this.query<{ version: string }>(
      "SELECT COUNT(*) || ':' || COALESCE(MAX(seq), 0) AS version FROM decision_heads",
    );
    return rows[0]!.version;
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
