// The auth matrix: every route the service serves x every kind of credential, on the SQLite
// store and on a real PostgreSQL server. Public routes answer everyone; every /v1 route answers
// 401 with the right code unless the key is a valid test or prod key; with checking off, all pass.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routes } from '../../src/http/routes.js';
import { serviceOf } from '../../src/service.js';
import { issueKey, mintKey } from '../../src/auth/keys.js';
import type { KeyChecker } from '../../src/auth/checker.js';
import { ERRORS } from '../../src/errors.js';
import { startGatedServer, type GatedServer } from '../helpers/gated-server.js';
import { startPostgres } from '../helpers/databases.js';
import { EXAMPLES, concrete } from '../helpers/examples.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-matrix-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const postgres = await startPostgres();
t.teardown(postgres.stop);

type Credential = 'none' | 'basic' | 'empty' | 'malformed' | 'bad checksum' | 'unknown' | 'revoked' | 'test' | 'prod';

async function credentials(server: GatedServer): Promise<Record<Credential, string | undefined>> {
  const store = server.access.store;
  const test = await issueKey(store, 'test', 'acme');
  const prod = await issueKey(store, 'prod', 'globex');
  const revoked = await issueKey(store, 'prod', 'acme');
  await store.revokeKey(revoked.record.id, new Date().toISOString());
  const unknown = mintKey('prod', 'acme').key;
  return {
    none: undefined,
    basic: 'Basic dXNlcjpwYXNz',
    empty: 'Bearer ',
    malformed: 'Bearer sk-not-a-key',
    'bad checksum': `Bearer ${test.key.slice(0, -1)}${test.key.endsWith('A') ? 'B' : 'A'}`,
    unknown: `Bearer ${unknown}`,
    revoked: `Bearer ${revoked.key}`,
    test: `Bearer ${test.key}`,
    prod: `Bearer ${prod.key}`,
  };
}

function expected(
  path: string,
  credential: Credential,
  keysOn: boolean,
): { status: number; code?: string; message?: string } {
  if (!keysOn || !path.startsWith('/v1/') || credential === 'test' || credential === 'prod') return { status: 200 };
  if (credential === 'none' || credential === 'basic' || credential === 'empty')
    return { status: 401, code: 'missing_api_key', message: ERRORS.missingApiKey().message };
  return { status: 401, code: 'invalid_api_key', message: ERRORS.invalidApiKey().message };
}

for (const [store, databaseUrl] of [
  ['sqlite', join(dir, 'service.db')],
  ['postgres', postgres.url],
] as const) {
  for (const auth of ['on', 'off'] as const) {
    t.test(`${store} store, key checking ${auth}: every route x every credential`, async (t) => {
      const server = await startGatedServer({ auth, databaseUrl, rateLimit: 0 });
      t.teardown(server.close);
      const creds = await credentials(server);
      // Every route the service serves, from the same function the server was built with.
      const all = routes(serviceOf(server.engine), server.access.gate);
      const checker = server.access.gate.options.keys as KeyChecker | undefined;
      let cases = 0;
      const mismatches: string[] = [];
      for (const route of all) {
        const path = concrete(route.path);
        const body = route.method === 'post' ? EXAMPLES[route.path] : undefined;
        // A route without an example (a raw-body route) is still checked: a valid key gets past the gate.
        const passes = (status: number) =>
          body === undefined && route.method === 'post' ? status !== 401 && status < 500 : status === 200;
        for (const [credential, authorization] of Object.entries(creds) as [Credential, string | undefined][]) {
          const before = checker?.lookups ?? 0;
          const res = await fetch(server.url + path, {
            method: route.method.toUpperCase(),
            headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const text = await res.text();
          const want = expected(route.path, credential, auth === 'on');
          cases++;
          const got = res.status === 401 ? JSON.parse(text).error : undefined;
          const ok =
            want.status === 200
              ? passes(res.status)
              : res.status === want.status && got?.code === want.code && got?.message === want.message;
          if (!ok)
            mismatches.push(
              `${route.method.toUpperCase()} ${path} with ${credential}: ${res.status} ${text.slice(0, 120)}`,
            );
          // Garbage is refused by shape and checksum alone: no store lookup.
          if (
            ['malformed', 'bad checksum', 'basic', 'empty', 'none'].includes(credential) &&
            (checker?.lookups ?? 0) !== before
          )
            mismatches.push(`${path} with ${credential}: a store lookup`);
        }
      }
      t.comment(
        `auth matrix (${store}, ${auth}): ${all.length} routes x ${Object.keys(creds).length} credentials = ${cases} cases, ${mismatches.length} mismatches`,
      );
      t.same(mismatches, [], '0 mismatches');
      t.ok(
        all.some((r) => r.path === '/metrics') && all.some((r) => r.path === '/openapi.json'),
        'public routes included',
      );
    });
  }
}
