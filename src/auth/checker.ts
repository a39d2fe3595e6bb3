// Bearer key checking: shape and checksum first (no store lookup for garbage), then the stored
// record by the key's id, compared by hash in constant time. Verdicts are cached for at most the
// configured time-to-live (<= 60 s); a revocation fan-out can drop one earlier.
import { timingSafeEqual } from 'node:crypto';
import { ERRORS } from '../errors.js';
import type { KeyMode, KeyRecord, Store } from '../store/store.js';
import { parseKey } from './keys.js';

/** Who a request is billed to and limited as. */
export interface Principal {
  keyId: string;
  organization: string;
  mode: KeyMode | 'public';
}

/** Every caller when key checking is off. */
export const PUBLIC: Principal = Object.freeze({ keyId: 'public', organization: 'public', mode: 'public' });

const CACHE_ENTRIES = 10_000;

export class KeyChecker {
  /** Store lookups made so far (garbage keys must not add to it). */
  lookups = 0;
  private readonly cache = new Map<string, { record: Promise<KeyRecord | undefined>; expires: number }>();

  constructor(
    private readonly store: Pick<Store, 'findKey'>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The principal of a valid, unrevoked key; throws 401 missing_api_key or invalid_api_key, or
   * 503 store_unavailable when the key's verdict is not cached and the store cannot be asked.
   */
  async check(authorization: string | undefined): Promise<Principal> {
    const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    if (token === undefined) throw ERRORS.missingApiKey();
    const key = parseKey(token);
    if (!key) throw ERRORS.invalidApiKey();
    const record = await this.record(key.id).catch(() => {
      throw ERRORS.storeUnavailable('the key store (database) is not answering, so this key cannot be checked');
    });
    const matches =
      record !== undefined && timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(key.hash, 'hex'));
    if (!matches || record.revokedAt !== null) throw ERRORS.invalidApiKey();
    return { keyId: record.id, organization: record.organization, mode: record.mode };
  }

  /** Drops a cached verdict (a revocation announced by another process). */
  forget(keyId: string): void {
    this.cache.delete(keyId);
  }

  // Concurrent requests with the same key share one lookup; a failed lookup is not cached.
  private record(id: string): Promise<KeyRecord | undefined> {
    const now = this.now();
    const hit = this.cache.get(id);
    if (hit && hit.expires > now) return hit.record;
    this.cache.delete(id);
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.lookups++;
    const record = this.store.findKey(id);
    this.cache.set(id, { record, expires: now + this.ttlMs });
    record.catch(() => this.cache.delete(id));
    return record;
  }
}
