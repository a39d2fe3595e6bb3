// The shared store for several replicas: PostgreSQL through a small connection pool.
import pg from 'pg';
import type { HeadRecord, KeyRecord, Store, UsageEntry, UsageTotal } from './store.js';

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
`;
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
  weights?: Buffer;
}

const HEAD_COLUMNS = 'id, capability, signature, model, created_at, examples, meta';

const toHead = (r: HeadRow): Omit<HeadRecord, 'weights'> => ({
  id: r.id,
  capability: r.capability,
  signature: r.signature,
  model: r.model,
  createdAt: r.created_at.toISOString(),
  examples: r.examples,
  meta: r.meta,
});

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

  // One statement is one transaction: every row or none.
  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    const column = <K extends keyof UsageEntry>(k: K) => entries.map((u) => u[k]);
    await this.query(
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
  // order: a poller can never see a later number before an earlier one (see headsVersion).
  async saveHead(h: HeadRecord): Promise<void> {
    await this.ready();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('LOCK TABLE decision_heads IN SHARE ROW EXCLUSIVE MODE');
      await client.query(
        `INSERT INTO decision_heads (id, capability, signature, model, created_at, examples, meta, weights)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (id) DO UPDATE SET seq = DEFAULT, capability = EXCLUDED.capability,
           signature = EXCLUDED.signature, model = EXCLUDED.model, created_at = EXCLUDED.created_at,
           examples = EXCLUDED.examples, meta = EXCLUDED.meta, weights = EXCLUDED.weights`,
        [
          h.id,
          h.capability,
          h.signature,
          h.model,
          h.createdAt,
          h.examples,
          h.meta,
          Buffer.from(h.weights.buffer, h.weights.byteOffset, h.weights.byteLength),
        ],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
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
