// Keys, the usage ledger and the fitted decision heads. Two implementations behind one interface:
// SQLite in a file (the embedded default, one machine) and PostgreSQL (shared by replicas).
// Chosen by DM_DATABASE_URL.
/** The two kinds of key (dm_test_... and dm_prod_...). */
export type KeyMode = 'test' | 'prod';

export interface KeyRecord {
  id: string;
  /** SHA-256 of the key, hex; the key itself is never stored. */
  hash: string;
  mode: KeyMode;
  organization: string;
  name: string;
  hint: string;
  createdAt: string; // ISO 8601
  revokedAt: string | null;
}

/** One row per successful billed request. */
export interface UsageEntry {
  /**
   * Unique per delivered answer, made by the service: a row is written at most once under it, so
   * a journalled row replayed twice (after a crash, or a write whose reply was lost) is one row.
   * `requestId` cannot be that key: it is the caller's `x-request-id` when one was sent.
   */
  entryId: string;
  requestId: string;
  keyId: string;
  organization: string;
  mode: KeyMode | 'public';
  route: string;
  inputTokens: number;
  at: string; // ISO 8601
}

export interface UsageTotal {
  organization: string;
  keyId: string;
  mode: string;
  requests: number;
  inputTokens: number;
}

/** A fitted decision head as stored: one per decision signature and model. */
export interface HeadRecord {
  id: string; // 'head_' + 16 hex chars, derived from the signature by the fitting code (src/heads/)
  capability: string; // 'yes-no' | 'classify' | 'rate' | 'verify' | 'classify-tree'
  signature: string; // canonical JSON of what defines the decision (label set, statement, scale...)
  model: string; // sha256 of the model file it was fitted on
  createdAt: string; // ISO 8601
  examples: number; // labelled examples it was fitted on
  meta: string; // JSON: outcomes, sizes, regularisation, the fit's figures (opaque to the store)
  weights: Uint8Array; // Float32 parameters, little-endian (opaque to the store)
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  addKey(key: KeyRecord): Promise<void>;
  findKey(id: string): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** False when no such key is active. */
  revokeKey(id: string, at: string): Promise<boolean>;
  /** Writes the rows in one transaction; a row whose `entryId` is already stored is skipped. */
  recordUsage(entries: readonly UsageEntry[]): Promise<void>;
  /** Totals per organization and key over [since, until). */
  usage(range?: { since?: string; until?: string }): Promise<UsageTotal[]>;
  /** Inserts the head, or replaces the one with the same id (a refit replaces its head). */
  saveHead(head: HeadRecord): Promise<void>;
  /** Every head without its weights, oldest first. */
  listHeads(): Promise<Omit<HeadRecord, 'weights'>[]>;
  /** The weights come in their own buffer (offset 0), so a Float32Array view of them is aligned. */
  findHead(id: string): Promise<HeadRecord | undefined>;
  /** False when no such head is stored. */
  removeHead(id: string): Promise<boolean>;
  /**
   * Changes whenever a head is saved (replaced, or saved again unchanged, too) or removed, so a
   * replica polling it never misses a change: the count and the highest write sequence number
   * (every save takes a new, never reused one, in commit order).
   */
  headsVersion(): Promise<string>;
  /** Resolves when the store answers (PostgreSQL: connected, tables made). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** postgres:// or postgresql:// opens PostgreSQL; anything else is a SQLite file path (`sqlite:` prefix optional). */
export async function openStore(url: string): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(url)) return (await import('./postgres.js')).PostgresStore.open(url);
  return (await import('./sqlite.js')).SqliteStore.open(url.replace(/^sqlite:/, ''));
}

/** A connection URL with its password replaced, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}
