// The heads CLI as an operator runs it (a child process on a SQLite file): an empty list, an
// unknown id named in the error, and a stored head listed, shown without its weights, removed.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/store.js';
import { describeSignature } from '../../src/cli/heads.js';
import { treeSignature, verifySignature } from '../../src/heads/signature.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-heads-cli-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const database = join(dir, 'service.db');
const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const run = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', [cli, ...args], { env: { ...process.env, DM_DATABASE_URL: database } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });

const id = 'head_3f9a1b2c4d5e6f70';
const model = '0123456789abcdef'.repeat(4);

t.test('no heads, unknown ids', async (t) => {
  const list = await run('heads', 'list');
  t.equal(list.code, 0);
  t.equal(list.stdout, 'id  organization  capability  examples  live  model  created  decision\n', 'the header alone');
  t.equal((await run('heads', 'list', '--json')).stdout.trim(), '[]');
  const shown = await run('heads', 'show', id);
  t.equal(shown.code, 2);
  t.equal(shown.stderr, `decision-machine: no head ${id}\n`);
  const removed = await run('heads', 'remove', id);
  t.equal(removed.code, 2);
  t.equal(removed.stderr, `decision-machine: no head ${id}\n`);
  t.match((await run('heads', 'show')).stderr, /usage: decision-machine heads show HEAD_ID/);
  t.equal((await run('heads', 'fit')).code, 2, 'an unknown verb');
  const refit = await run('heads', 'refit', id, '--org', 'acme');
  t.equal(refit.code, 4, 'a refit with no corrections to fit');
  t.match(refit.stderr, `no corrections of ${id} for acme`);
  t.match((await run('heads')).stderr, /usage: decision-machine heads list/);
});

t.test('a stored head: listed, shown, removed', async (t) => {
  const store = await openStore(database);
  await store.saveHead({
    id,
    capability: 'classify',
    organization: '',
    signature: JSON.stringify({ labels: { billing: 'money matters', bug: 'it is broken', other: '' } }),
    model,
    createdAt: '2026-11-28T22:00:00.000Z',
    examples: 24,
    meta: JSON.stringify({ outcomes: ['billing', 'bug', 'other'], lambda: 0.1 }),
    weights: new Uint8Array(new Float32Array(3 * 897).buffer),
  });
  await store.close();

  const list = await run('heads', 'list');
  t.equal(list.code, 0);
  t.match(
    list.stdout.split('\n')[1],
    new RegExp(
      `^${id}  \\(deployment\\)  classify    24        -     0123456789ab  2026-11-28T22:00:00.000Z  3 labels: billing, bug, other$`,
    ),
    'id, whose, capability, examples, live accuracy, the model sha cut to 12, date, the labels',
  );
  t.notOk(list.stdout.includes(model), 'the model sha is cut');
  t.same(
    JSON.parse((await run('heads', 'list', '--json')).stdout).map((h: { id: string }) => h.id),
    [id],
  );

  const shown = await run('heads', 'show', id);
  t.equal(shown.code, 0);
  t.same(JSON.parse(shown.stdout), {
    id,
    capability: 'classify',
    organization: '',
    model,
    createdAt: '2026-11-28T22:00:00.000Z',
    examples: 24,
    signature: { labels: { billing: 'money matters', bug: 'it is broken', other: '' } },
    meta: { outcomes: ['billing', 'bug', 'other'], lambda: 0.1 },
    weightsBytes: 4 * 3 * 897,
  });
  t.match(shown.stdout, /\n {2}"meta": \{\n {4}"outcomes"/, 'meta pretty-printed');

  const removed = await run('heads', 'remove', id);
  t.equal(removed.code, 0);
  t.match(removed.stderr, `removed ${id}`);
  t.equal((await run('heads', 'show', id)).code, 2, 'gone');
  t.equal((await run('heads', 'list')).stdout.split('\n').length, 2, 'the header alone again');
});

t.test('each kind of decision described in one line', async (t) => {
  t.equal(describeSignature('{"labels":["a","b"]}'), '2 labels: a, b');
  t.equal(
    describeSignature(
      JSON.stringify({ tree: { sales: { description: 'x', labels: { new: 'a', renew: 'b' } }, other: 'c' } }),
    ),
    'tree of 3 leaves: sales, other',
  );
  t.equal(describeSignature('{"scale":["bad","ok","good"]}'), 'scale of 3: bad < ok < good');
  t.equal(
    describeSignature(JSON.stringify({ statement: 'The invoice is unpaid.', when_true: 'no payment' })),
    '"The invoice is unpaid."',
  );
  t.equal(describeSignature('{"field":{"name":"email"},"value":"x"}'), 'field email');
  t.equal(describeSignature(JSON.stringify({ statement: 'x'.repeat(100) })).length, 60, 'long ones cut to 60');
  t.equal(describeSignature('not json'), 'not json');
  // The keys fitted heads are stored under.
  const tree = { sales: { description: 'x', labels: { renew: 'b', new: 'a' } }, other: { description: 'c' } };
  t.equal(describeSignature(treeSignature(tree).key), 'tree of 3 leaves: other, sales');
  t.equal(describeSignature(verifySignature('start date', 'when the lease begins').key), 'field start date');
});
