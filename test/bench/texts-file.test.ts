// A sweep of a user's own requests (--texts) against a running server (--url), on the fake
// binding so that it takes seconds: each capability of the file is a row, its requests sent in
// turn as written, and its decisions counted from each body (so a row's decisions per request is
// their mean); --reuse is refused, the file's requests being sent as written.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Row } from '../../src/bench/sweep.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { startServer } from '../helpers/server.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-bench-texts-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const server = await startServer(fakeBinding({ delayMs: 5 }), { modelPath: 'fake', queue: 4 });
t.teardown(server.close);

const file = join(dir, 'requests.jsonl');
const lines = [
  { cap: 'yes-no', req: { text: 'The parcel came late.', statement: 'It was late.' }, expect: { answer: true } },
  { cap: 'yes-no', req: { texts: ['a', 'b'], statements: ['c', 'd', 'e'] } },
  { cap: 'classify', req: { text: 'Charged twice.', labels: ['billing', 'shipping'] } },
];
writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));

/** The command, run apart (this process serves the fake server meanwhile). */
async function bench(args: string[]): Promise<{ status: unknown; stdout: string; stderr: string }> {
  const child = spawn('node', [cli, 'bench', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise((resolve) => child.once('exit', resolve));
  return { status, stdout, stderr };
}

t.test("the file's capabilities as rows, its requests in turn", async (t) => {
  const run = await bench([
    ...['--url', server.url, '--texts', file, '--concurrency', '1,3'],
    ...['--requests', '6', '--warmup', '0', '--repetitions', '2', '--output', 'jsonl'],
  ]);
  t.equal(run.status, 0, run.stderr);
  const rows = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  t.same(
    rows.map((r) => [r.capability, r.concurrency, r.batch, r.questions, r.textChars, r.labels]),
    [
      ['yes-no', 1, null, null, null, null],
      ['yes-no', 3, null, null, null, null],
      ['classify', 1, null, null, null, null],
      ['classify', 3, null, null, null, null],
    ],
    'a row per capability and concurrency; the shape is the requests own',
  );
  for (const r of rows) {
    t.same([r.requests, r.refused, r.errors], [12, 0, 0], `${r.capability}: 6 requests x 2 repetitions answered`);
    t.equal(r.requests * r.decisionsPerRequest, r.decisions, 'requests x decisions per request = decisions');
  }
  // yes-no's two requests in turn: 1 decision, then 2 texts x 3 statements.
  t.equal(rows[0]!.decisions, 12 / 2 + (12 / 2) * 6);
  t.equal(rows[2]!.decisions, 12, 'classify: one label per request');
});

t.test('--reuse with --texts: exit 2 naming --reuse', async (t) => {
  const run = await bench(['--url', server.url, '--texts', file, '--reuse']);
  t.equal(run.status, 2);
  t.match(run.stderr, /--reuse: does not apply with --texts/);
});
