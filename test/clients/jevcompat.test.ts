// The System One conformance suite (PyPI jevcompat 0.1.1, 33 MUST and 15 SHOULD requirements),
// with typesafe-sdk installed so its drop-in check drives the official SDK, against a started
// server with keys on: conformant, every applicable MUST and at least 14 SHOULD; usage in the ledger.
// JevBench's own check (PyPI jevbench 0.1.0) reads one request's answers on the same server.
// Of its two auth MUSTs exactly one applies to a deployment (with keys: auth.bearer; without:
// auth.ignored-when-off), so a second, short run against a server with keys off shows the other.
import t from 'tap';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pythonClients, run } from '../helpers/python-clients.js';
import { startModelServer } from './server.js';

// The real model answers every request: longer than the suite's 600 s default on a busy machine.
t.setTimeout(1_800_000);

interface Report {
  summary: {
    verdict: string;
    MUST: { passed: number; failed: number; skipped: number };
    SHOULD: { passed: number; failed: number; skipped: number };
  };
  results: { id: string; level: string; status: string; findings: { message: string }[]; reason: string }[];
  seconds: number;
}

const { python, jevcompat, jevbench } = pythonClients();
const server = await startModelServer({ rateLimit: 100_000 });
t.teardown(server.close);
const dir = mkdtempSync(join(tmpdir(), 'dm-jevcompat-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('jevcompat test: conformant, every applicable MUST, SHOULD >= 14/15, the SDK drop-in included', async (t) => {
  const key = await server.key('jevcompat');
  const out = await run(
    jevcompat,
    ['test', server.url, '--key', key, '--timeout', '600', '--json', join(dir, 'report.json')],
    { NO_COLOR: '1' },
    3_600_000,
  );
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
  const { verdict, MUST, SHOULD } = report.summary;
  for (const r of report.results)
    if (r.status !== 'pass')
      t.comment(`${r.level} ${r.id}: ${r.status} ${r.findings.map((f) => f.message).join(' | ') || r.reason}`);
  t.equal(verdict, 'conformant', out.stdout.slice(-3000));
  t.equal(out.code, 0, 'exit code 0');
  // Of the two auth MUSTs exactly one applies (with a key: auth.bearer), so 32 of 33 can be tested.
  t.equal(MUST.failed, 0, 'no MUST fails');
  t.equal(MUST.passed, 32, 'every applicable MUST');
  t.ok(SHOULD.passed >= 14, `SHOULD ${SHOULD.passed}/15`);
  t.equal(
    report.results.find((r) => r.id === 'dropin.sdk-python')?.status,
    'pass',
    'typesafe-sdk parses every answer type',
  );
  t.comment(
    `jevcompat: ${verdict}, MUST ${MUST.passed}/32 applicable, SHOULD ${SHOULD.passed}/15, ${report.seconds} s`,
  );

  const usage = await server.access.store.usage();
  const row = usage.find((u) => u.organization === 'jevcompat');
  t.ok(
    row && row.requests > 20 && row.inputTokens > 0,
    `ledger: ${row?.requests} answered requests, ${row?.inputTokens} input tokens`,
  );
});

t.test(
  'jevbench check: the benchmark reads every answer of one request (bench/eval/jevbench.ts runs the benchmark)',
  async (t) => {
    const key = await server.key('jevbench');
    const out = await run(
      jevbench,
      ['check', '--url', `${server.url}/v1/systemone`, '--model', 'decision-machine-1'],
      { JEVBENCH_API_KEY: key, NO_COLOR: '1' },
      600_000,
    );
    t.equal(out.code, 0, out.stderr.slice(-2000));
    t.match(out.stdout, /jevbench check: OK/);
    t.comment(out.stdout.trim());
  },
);

t.test('jevcompat with keys off: an Authorization header is accepted and ignored (the 33rd MUST)', async (t) => {
  const open = await startModelServer({ auth: 'off' });
  t.teardown(open.close);
  // The suite's own runner, limited to one case (its preflight, which settles auth, always runs).
  const script =
    'import json, sys; from jevcompat.runner import run; r = run(sys.argv[1], sdk=False, only={"models-endpoint"}); ' +
    'print(json.dumps({x.id: x.status for x in r.results if x.id.startswith("auth.")}))';
  const out = await run(python, ['-c', script, open.url], { NO_COLOR: '1' }, 600_000);
  t.equal(out.code, 0, out.stderr.slice(-2000));
  const auth = JSON.parse(out.stdout.trim().split('\n').pop()!) as Record<string, string>;
  t.equal(
    auth['auth.ignored-when-off'],
    'pass',
    'a request carrying Authorization: Bearer is answered when keys are off',
  );
  t.comment(`jevcompat keys off: ${JSON.stringify(auth)}`);
});
