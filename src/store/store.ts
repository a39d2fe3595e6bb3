// Keys and the usage ledger. Two implementations behind one interface: SQLite in a file (the
// embedded default, one machine) and PostgreSQL (shared by replicas). Chosen by DM_DATABASE_URL.
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

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  addKey(key: KeyRecord): Promise<void>;
  findKey(id: string): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** False when no such key is active. */
  revokeKey(id: string, at: string): Promise<boolean>;
  recordUsage(entry: UsageEntry): Promise<void>;
  /** Totals per organization and key over [since, until). */
  usage(range?: { since?: string; until?: string }): Promise<UsageTotal[]>;
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
