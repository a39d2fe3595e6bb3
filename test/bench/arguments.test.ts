// decision-machine bench's argument errors: a message naming the flag, before any model is
// loaded. Every case through the parser the command runs; a few through the command itself, for
// its exit status 2, the message and usage on stderr and nothing on stdout.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan, UsageError } from '../../src/bench/plan.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-bench-args-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
/** The command itself, as a user runs it. */
const bench = (...args: string[]) => {
  const run = spawnSync('node', [cli, 'bench', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stderr: run.stderr, stdout: run.stdout };
};

const file = join(dir, 'requests.jsonl');
writeFileSync(file, `${JSON.stringify({ cap: 'yes-no', req: { text: 'a', statement: 'b' } })}\n`);
const bad = join(dir, 'bad.jsonl');
writeFileSync(bad, '{"cap": "yes-no", "req": {"text": "a"}}\nnot json\n');

const cases: [string[], string, RegExp][] = [
  [['--capabilities', 'yes-no,sentiment'], '--capabilities', /unknown capability "sentiment"/],
  [['--capabilities', 'yes-no,,classify'], '--capabilities', /not a comma list/],
  [['--concurrency', '0'], '--concurrency', /0 is outside 1 to 1024/],
  [['--slots=-1'], '--slots', /-1 is outside 1 to 64/],
  [['--slots', '-1'], '--slots', /ambiguous/],
  [['--threads', '1,,2'], '--threads', /not a comma list of integers/],
  [['--batch', '1,two'], '--batch', /not a comma list of integers/],
  [['--batch', '33'], '--batch', /outside 1 to 32/],
  [['--labels', '1'], '--labels', /outside 2 to 64/],
  [['--capabilities', 'rate', '--labels', '12'], '--labels', /rate takes 2 to 10 levels/],
  [['--batch', '32', '--questions', '9'], '--questions', /more than 256 decisions/],
  [['--requests', '0'], '--requests', /not a positive integer/],
  [['--repetitions=-2'], '--repetitions', /not a positive integer/],
  [['--duration', '0'], '--duration', /not a positive number/],
  [['--requests', '4', '--duration', '10'], '--duration', /not both/],
  [['--output', 'xml'], '--output', /md, json, csv or jsonl/],
  [['--recommend'], '--recommend', /needs --p99-ms/],
  [['--p99-ms', '500'], '--p99-ms', /only with --recommend/],
  [['--url', 'localhost:8080'], '--url', /not an http/],
  [['--url', 'http://127.0.0.1:1', '--slots', '2'], '--slots', /the deployment's own/],
  [['--pid', '1'], '--pid', /only with --url/],
  [['--peer', 'vllm'], '--peer', /the one peer is llama-server/],
  [['--peer', 'llama-server', '--capabilities', 'extract'], '--peer', /yes-no and classify only/],
  [['--texts', join(dir, 'missing.jsonl')], '--texts', /ENOENT/],
  [['--texts', bad], '--texts', /bad\.jsonl:2: not JSON/],
  [['--texts', file, '--batch', '2'], '--batch', /sent as written/],
  [['--texts', file, '--capabilities', 'classify'], '--capabilities', /classify has no request/],
  [['--sweep'], '--sweep', /Unknown option/],
  [['--slots'], '--slots', /argument missing/],
];

function refusal(args: string[]): UsageError | undefined {
  try {
    parsePlan(args, { slots: 2, threads: 2 });
  } catch (err) {
    return err as UsageError;
  }
  return undefined;
}

for (const [args, flag, message] of cases)
  t.test(`${args.join(' ')}: refused naming ${flag}`, async (t) => {
    const err = refusal(args);
    t.ok(err instanceof UsageError, 'a usage error');
    t.equal(err?.flag, flag);
    t.match(err?.message, message);
  });

// An unknown capability, a zero count, a negative one and a malformed list, as a user meets them.
for (const args of [['--capabilities', 'sentiment'], ['--concurrency', '0'], ['--slots=-1'], ['--threads', '1,,2']])
  t.test(`decision-machine bench ${args.join(' ')}: exit 2`, async (t) => {
    const run = bench(...args);
    t.equal(run.status, 2, run.stderr);
    t.match(run.stderr, `decision-machine bench: ${args[0]!.split('=')[0]}: `);
    t.match(run.stderr, /usage: decision-machine bench/, 'the usage follows');
    t.equal(run.stdout, '', 'nothing on stdout');
  });

t.test('--help: the usage on stdout, exit 0', async (t) => {
  const run = bench('--help');
  t.equal(run.status, 0);
  for (const flag of ['--capabilities', '--concurrency', '--url', '--peer', '--recommend', '--svg'])
    t.match(run.stdout, flag);
});

t.test('the settings of a plan: defaults, comma lists, and only the settings a capability reads', async (t) => {
  const plan = parsePlan(['--capabilities', 'yes-no,verify', '--concurrency', '1,4', '--batch', '1,2'], {
    slots: 3,
    threads: 5,
  });
  if (plan === 'help') throw new Error('help');
  t.same([plan.slots, plan.threads, plan.stop, plan.repetitions], [[3], [5], { requests: 16 }, 3]);
  t.same(plan.concurrency, [1, 4]);
  t.equal(plan.questions, undefined, "each capability's own number of questions");
});
