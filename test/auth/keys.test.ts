// Key format, the verdict cache, the in-process limiter and item counting, without servers.
import t from 'tap';
import { mintKey, parseKey } from '../../src/auth/keys.js';
import { KeyChecker } from '../../src/auth/checker.js';
import { MemoryLimiter } from '../../src/auth/limiter.js';
import { loadConfig } from '../../src/config.js';
import { redactUrl, type KeyRecord } from '../../src/store/store.js';
import { ServiceError } from '../../src/errors.js';

t.test('keys: the documented shape, a checksum, only a hash kept', async (t) => {
  const { key, parsed } = mintKey('prod', 'acme');
  t.match(key, /^prod_sk-acme-[0-9A-Za-z]{36}$/);
  t.equal(parsed.organization, 'acme');
  t.equal(parsed.mode, 'prod');
  t.match(parsed.hash, /^[0-9a-f]{64}$/);
  t.not(parsed.hash.includes(key), true);
  t.match(mintKey('test', 'x1').key, /^test_sk-x1-/);
  t.not(mintKey('test', 'a').key, mintKey('test', 'a').key, 'random');
  // Every single-character change is caught by the checksum (or the shape).
  let caught = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key[i] === 'a' ? 'b' : 'a';
    if (parseKey(key.slice(0, i) + c + key.slice(i + 1)) === undefined) caught++;
  }
  t.equal(caught, key.length);
  for (const garbage of [
    '',
    'sk-abc',
    'prod_sk-acme-',
    'Prod_sk-acme-' + key.slice(13),
    key + 'x',
    'prod_sk-ACME-' + key.slice(13),
  ])
    t.equal(parseKey(garbage), undefined, garbage);
  t.throws(() => mintKey('test', 'Acme Inc'), /organization/);
});

t.test('checker: garbage never reaches the store; verdicts cached for the TTL only', async (t) => {
  const { key, parsed } = mintKey('test', 'acme');
  const record: KeyRecord = {
    id: parsed.id,
    hash: parsed.hash,
    mode: 'test',
    organization: 'acme',
    name: '',
    hint: parsed.hint,
    createdAt: '',
    revokedAt: null,
  };
  let now = 0;
  const checker = new KeyChecker(
    { findKey: async (id) => (id === record.id ? { ...record } : undefined) },
    60_000,
    () => now,
  );
  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: ServiceError) => e.code,
    );
  t.equal(await code(checker.check(undefined)), 'missing_api_key');
  t.equal(await code(checker.check('Basic abc')), 'missing_api_key');
  t.equal(await code(checker.check('Bearer nonsense')), 'invalid_api_key');
  t.equal(checker.lookups, 0, 'no lookup for garbage');
  t.same(await checker.check(`Bearer ${key}`), { keyId: parsed.id, organization: 'acme', mode: 'test' });
  t.equal(await code(checker.check(`bearer  ${key}`)), 'ok', 'scheme is case-insensitive');
  t.equal(checker.lookups, 1, 'cached');
  record.revokedAt = 'now';
  now = 59_999;
  t.equal(await code(checker.check(`Bearer ${key}`)), 'ok', 'still cached before 60 s');
  now = 60_000;
  t.equal(await code(checker.check(`Bearer ${key}`)), 'invalid_api_key', 'revoked once the verdict expires');
  record.revokedAt = null;
  checker.forget(parsed.id);
  t.equal(await code(checker.check(`Bearer ${key}`)), 'ok', 'forget drops the verdict');
  t.throws(() => loadConfig({ DM_KEY_CACHE_SECONDS: '61' }), /DM_KEY_CACHE_SECONDS/, 'the cache cannot exceed 60 s');
});

t.test('limiter: fixed minute windows, a refused request costs nothing', async (t) => {
  let now = 120_000;
  const limiter = new MemoryLimiter(5, () => now);
  t.same(await limiter.take('k', 3), { allowed: true, limit: 5, remaining: 2, resetSeconds: 60 });
  t.equal((await limiter.take('k', 3)).allowed, false);
  t.equal((await limiter.take('k', 2)).allowed, true);
  t.equal((await limiter.take('other', 5)).allowed, true, 'per key');
  now += 59_000;
  t.same(await limiter.take('k', 1), { allowed: false, limit: 5, remaining: 0, resetSeconds: 1 });
  now += 1_000;
  t.equal((await limiter.take('k', 5)).allowed, true, 'a new window');
});

t.test('connection URLs are logged without their password', async (t) => {
  t.equal(redactUrl('postgres://dm:s3cret@db:5432/dm'), 'postgres://dm:***@db:5432/dm');
  t.equal(redactUrl('redis://:pw@cache:6379'), 'redis://:***@cache:6379');
  t.equal(redactUrl('/var/lib/dm/service.db'), '/var/lib/dm/service.db');
});
