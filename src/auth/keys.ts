// API keys: `{mode}_sk-{namespace}-{secret}`. The namespace is the organization the key belongs to;
// the secret is 30 random base62 characters (178 bits) followed by a 6-character CRC-32 of
// everything before it, so a mistyped or invented key is refused by its shape alone, before any
// store lookup. Only a SHA-256 of the key is ever stored.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyMode, KeyRecord, Store } from '../store/store.js';

/** What a key says about itself once its shape and checksum hold. */
export interface ParsedKey {
  mode: KeyMode;
  organization: string;
  /** Public handle of the key (for lists, logs and revocation): a prefix of its hash. */
  id: string;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  /** The last characters (the checksum), to tell keys apart in lists without revealing them. */
  hint: string;
}

export const ORGANIZATION = /^[a-z0-9]{1,32}$/;
const SHAPE = /^(test|prod)_sk-([a-z0-9]{1,32})-([0-9A-Za-z]{36})$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 30;
const CHECK_CHARS = 6; // 62^6 > 2^32

/** A new key for an organization; the full key is returned once and never stored. */
export function mintKey(mode: KeyMode, organization: string): { key: string; parsed: ParsedKey } {
  if (!ORGANIZATION.test(organization)) throw new Error('organization: 1 to 32 characters a-z and 0-9');
  let random = '';
  while (random.length < RANDOM_CHARS) {
    for (const byte of randomBytes(64)) if (byte < 248 && random.length < RANDOM_CHARS) random += BASE62[byte % 62];
  }
  const body = `${mode}_sk-${organization}-${random}`;
  const key = body + checksum(body);
  return { key, parsed: parseKey(key)! };
}

/** Mints a key and stores its record (hash, never the key); returns the full key, to show once. */
export async function issueKey(
  store: Pick<Store, 'addKey'>,
  mode: KeyMode,
  organization: string,
  name = '',
): Promise<{ key: string; record: KeyRecord }> {
  const { key, parsed } = mintKey(mode, organization);
  const record: KeyRecord = {
    id: parsed.id,
    hash: parsed.hash,
    mode,
    organization,
    name,
    hint: parsed.hint,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await store.addKey(record);
  return { key, record };
}

/** The key's parts when its shape and checksum hold, else undefined. Costs no store lookup. */
export function parseKey(key: string): ParsedKey | undefined {
  const m = SHAPE.exec(key);
  if (!m) return undefined;
  const body = key.slice(0, -CHECK_CHARS);
  if (checksum(body) !== key.slice(-CHECK_CHARS)) return undefined;
  const hash = createHash('sha256').update(key).digest('hex');
  return { mode: m[1] as KeyMode, organization: m[2]!, id: `key_${hash.slice(0, 16)}`, hash, hint: key.slice(-4) };
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECK_CHARS; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}
