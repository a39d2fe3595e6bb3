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
  /** The decisions this answer made that may be corrected (POST .../feedback), kept with its row. */
  decisions?: KeptDecision[];
}

/** A delivered decision, kept for the retention time so that it can be corrected. */
export interface KeptDecision {
  id: string; // 'dec_' + 24 hex chars, sent as x-decision-id
  organization: string;
  capability: string;
  /**
   * JSON of the fit line it would be without its expect: {cap, req} with one text (src/feedback),
   * or, where texts are not kept, without it and with its `text_sha256`.
   */
  line: string;
  /** JSON of what it answered, in expect's form ({"label": ...}), for the heads' live accuracy. */
  answer: string;
  /** The head that decided it, or '' for the zero-shot reading. */
  head: string;
  at: string; // ISO 8601
}

/**
 * A correction: a whole fit line ({cap, req, expect}), the organization that taught it. Where texts
 * are not kept (DM_FEEDBACK_TEXTS=hash) its req has no text, and the line its text's `text_sha256`.
 */
export interface Correction {
  id: string; // the corrected decision's id (a second correction of it replaces the first), or 'cor_' + hex
  organization: string;
  /** The signature id of the decision (src/heads/signature.ts), which its head will carry. */
  signature: string;
  line: string;
  /** The head that made the corrected decision ('' for the zero-shot reading or a fit line sent whole). */
  head: string;
  /** Whether that decision answered what the correction expects; null for a fit line sent whole. */
  right: boolean | null;
  at: string; // ISO 8601
  /** What the model read of its text, once read (src/feedback/readings.ts); never written by saveCorrection. */
  reading?: CorrectionReading;
}

/**
 * A correction's text as a head reads it, read once when the correction arrives, so a refit only
 * fits. Bound to the model and reading that made it: another's is read again.
 */
export interface CorrectionReading {
  /** The model's SHA-256 and the reading's version (src/decisions/reading.ts), as "sha:version". */
  model: string;
  /** The head's features (src/heads/reading.ts `Reading`). */
  hidden: Float32Array;
  base: number[];
  /** The outcome the shipped zero-shot decision (no head) answers: the route check's. */
  route: number;
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
  organization: string; // '' for a deployment-wide head; else it decides that organization's requests only
  meta: string; // JSON: outcomes, sizes, regularisation, the fit's figures (opaque to the store)
  weights: Uint8Array; // Float32 parameters, little-endian (opaque to the store)
}

/** A reading's features as stored: the Float32Array's bytes. */
export function readingBytes(hidden: Float32Array): Buffer {
  return Buffer.from(hidden.buffer, hidden.byteOffset, hidden.byteLength);
}

/** The stored bytes back as features (copied, so the view is aligned). */
export function readingHidden(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
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
  /**
   * Inserts the head, or replaces the one with the same id (a refit replaces its head); the
   * replaced one is kept as its previous version for rollbackHead.
   */
  saveHead(head: HeadRecord): Promise<void>;
  /** Puts the head's previous version back; false when it has none. */
  rollbackHead(id: string): Promise<boolean>;
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
  /** A kept decision; undefined when none is kept under that id (never made, or forgotten). */
  findDecision(id: string): Promise<KeptDecision | undefined>;
  /**
   * Forgets the decisions kept before `before` (ISO 8601), and every reading kept for a decision
   * that is neither kept nor corrected any more; returns how many decisions.
   */
  forgetDecisions(before: string): Promise<number>;
  /** Stores the correction, replacing one with the same id. */
  saveCorrection(c: Correction): Promise<void>;
  /** Every correction of one organization for one signature, oldest first, with its reading if kept. */
  corrections(organization: string, signature: string): Promise<Correction[]>;
  /** How many corrections one organization has sent for one signature. */
  countCorrections(organization: string, signature: string): Promise<number>;
  /**
   * Keeps the reading of the correction `id`, or of the kept decision `id` (its correction takes
   * the decision's id, and so the reading), replacing one kept before.
   */
  saveReading(id: string, reading: CorrectionReading): Promise<void>;
  /**
   * How often the decisions of `head` corrected since `since` (ISO 8601) were right: a head's live,
   * prequential accuracy (each correction judges a decision made before it was known).
   */
  headAccuracy(head: string, since: string): Promise<{ right: number; judged: number }>;
  /**
   * Takes the lease `name` for `holder` for `ms` (taken when free, expired or already its own);
   * false when another holder has it. Replicas take one per refit, so one refits a decision at a time.
   */
  takeLease(name: string, holder: string, ms: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;
  /** Resolves when the store answers (PostgreSQL: connected, tables made). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** postgres:// or postgresql:// opens PostgreSQL; anything else is a SQLite file path (`sqlite:` prefix optional). */
export async function openStore(url: string): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(url)) return (await import('./postgres.js')).PostgresStore.open(url);
  return (await import('./sqlite.js')).SqliteStore.open(url.replace(/^sqlite:/, ''));
}

/** Opens the store at `url` for `use` and closes it after, whether `use` resolves or throws. */
export async function withStore<T>(url: string, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(url);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** A connection URL with its password replaced, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}
