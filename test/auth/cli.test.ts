// The operator CLI as an operator runs it (a child process on a SQLite file): the key is printed
// once and never stored or listed; revocation; usage priced at 0.04 USD per million input tokens.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-cli-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = join(dir, 'service.db');
const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const run = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', [cli, ...args], { env: { ...process.env, DM_DATABASE_URL: database } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });

t.test('issue, list, revoke, usage', async (t) => {
  const issued = await run('keys', 'issue', '--org', 'acme', '--mode', 'prod', '--name', 'backend');
  t.equal(issued.code, 0);
  const key = issued.stdout.trim();
  t.match(key, /^prod_sk-acme-[0-9A-Za-z]{36}$/, 'the full key, on stdout alone');
  t.match(issued.stderr, /shown only this once/);
  const id = /issued (key_[0-9a-f]{16})/.exec(issued.stderr)![1]!;
  await run('keys', 'issue', '--org', 'acme', '--mode', 'test');

  const list = await run('keys', 'list');
  t.match(list.stdout, id);
  t.match(list.stdout, `prod_sk-acme-...${key.slice(-4)}`);
  t.notOk(list.stdout.includes(key.slice(13, -4)), 'lists never show the secret');
  t.notOk(readFileSync(database).includes(key.slice(13, -4)), 'the database holds no part of the secret');
  t.notOk((await run('keys', 'list', '--json')).stdout.includes('"hash"'));

  t.equal((await run('keys', 'issue', '--org', 'Not Valid')).code, 2);
  t.equal((await run('keys', 'revoke', id)).code, 0);
  t.equal((await run('keys', 'revoke', id)).code, 2, 'already revoked');
  t.match(
    (await run('keys', 'list')).stdout,
    new RegExp(`${id}.*\\d{4}-\\d\\d-\\d\\dT.*\\d{4}-\\d\\d-\\d\\dT`),
    'revocation time listed',
  );

  const store = await openStore(database);
  const at = new Date().toISOString();
  for (const [keyId, mode, tokens] of [
    [id, 'prod', 600_000],
    [id, 'prod', 400_000],
    ['key_test', 'test', 5_000],
  ] as const) {
    await store.recordUsage([
      {
        entryId: `${keyId}-${tokens}`,
        requestId: 'r', // one request id on several rows: a caller's x-request-id may repeat
        keyId,
        organization: 'acme',
        mode,
        route: '/v1/decision-machine-1/yes-no',
        inputTokens: tokens,
        at,
      },
    ]);
  }
  await store.close();
  const usage = JSON.parse((await run('usage', '--json')).stdout);
  t.same(
    usage.find((u: { keyId: string }) => u.keyId === id),
    { organization: 'acme', keyId: id, mode: 'prod', requests: 2, inputTokens: 1_000_000, usd: 0.04 },
  );
  t.equal(usage.find((u: { keyId: string }) => u.keyId === 'key_test').usd, 0, 'test keys are not charged');
  t.match((await run('usage', '--since', '2000-01-01')).stdout, /total 0\.040000 USD/);
  t.equal((await run('usage', '--since', 'yesterday-ish')).code, 2);
  t.equal((await run('usage', '--until', '2000-01-01', '--json')).stdout.trim(), '[]');
});
