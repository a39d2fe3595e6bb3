// decision-machine bench --from: a saved sweep written again without measuring, and
// --recommend's choice: the most decisions/s at p99 within the bound, with nothing refused, as
// the environment variables a deployment sets (DM_QUEUE: the clients beyond the slots).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Row, Sweep } from '../../src/bench/sweep.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-bench-from-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const figure = (mean: number) => ({ mean, sd: mean / 10 });
/** A yes-no row of `slots` x `threads` at `concurrency`, its figures as given. */
const row = (
  slots: number,
  threads: number,
  concurrency: number,
  perSecond: number,
  p99: number,
  refused = 0,
): Row => ({
  engine: 'decision-machine',
  capability: 'yes-no',
  slots,
  threads,
  concurrency,
  batch: 1,
  questions: 1,
  textChars: 300,
  labels: null,
  repetitions: 3,
  requests: 48,
  decisionsPerRequest: 1,
  decisions: 48,
  refused,
  errors: 0,
  decisionsPerSecond: figure(perSecond),
  requestsPerSecond: figure(perSecond),
  inputTokensPerSecond: figure(perSecond * 120),
  p50Ms: figure(p99 / 2),
  p90Ms: figure(p99 * 0.8),
  p99Ms: figure(p99),
  slotWaitP50Ms: figure(3),
  cpuPercent: figure(95),
  rssMiB: figure(1700),
});
const sweep: Sweep = {
  date: '2026-12-01T22:00:00.000Z',
  command: 'decision-machine bench --slots 1,2 --threads 1,2 --concurrency 1,4',
  machine: { cpus: 2, cpuModel: 'AMD EPYC', loadAverageAtStart: [0.05, 0.1, 0.1], node: 'v20' },
  model: 'qwen2 1.5B Q4_K - Medium',
  seed: 7,
  note: 'in process',
  rows: [
    row(1, 2, 1, 1.4, 800),
    row(1, 2, 4, 1.6, 3100),
    row(2, 1, 1, 1.1, 1000),
    row(2, 1, 4, 1.7, 2500),
    row(2, 2, 4, 1.9, 2400, 3), // the most decisions/s, but it refused requests
  ],
};
const file = join(dir, 'sweep.json');
writeFileSync(file, JSON.stringify(sweep));
const bench = (...args: string[]) => spawnSync('node', [cli, 'bench', ...args], { encoding: 'utf8', timeout: 30_000 });

t.test('the table of a saved sweep and the best setting within the bound', async (t) => {
  const run = bench('--from', file, '--recommend', '--p99-ms', '2600');
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /\| yes-no \| 2 \| 1 \| 4 \| 1 \| 1 \| 300 \| - \| 1\.70 ± 0\.17 \|/);
  t.match(run.stdout, /texts of seed 7/, 'the seed under the table');
  t.match(
    run.stdout,
    /- yes-no \(1 text per call, 1 question, 300 characters\):\n  1\.70 decisions\/s at p99 2500 ms with 4 clients in flight\n  DM_SLOTS=2 DM_THREADS=1 DM_QUEUE=2\n/,
  );
  const tight = bench('--from', file, '--recommend', '--p99-ms', '500');
  t.match(tight.stdout, /no setting measured meets it \(the lowest p99 was 800 ms\)/);
});

t.test('another format and the chart from the same file', async (t) => {
  const svg = join(dir, 'knee.svg');
  const run = bench('--from', file, '--output', 'csv', '--svg', svg);
  t.equal(run.status, 0, run.stderr);
  t.equal(run.stdout.trim().split('\n').length, 1 + sweep.rows.length);
  const chart = readFileSync(svg, 'utf8');
  t.equal(chart.match(/<polyline /g)?.length, 3, 'three configurations: 1x2, 2x1, 2x2');
});

t.test('a result file of dated runs: their rows in one table', async (t) => {
  const later: Sweep = { ...sweep, date: '2026-12-02T08:00:00.000Z', seed: 8, rows: [row(4, 1, 8, 1.2, 9000)] };
  const runs = join(dir, 'runs.json');
  writeFileSync(runs, JSON.stringify({ runs: [sweep, later] }));
  const run = bench('--from', runs, '--output', 'csv');
  t.equal(run.status, 0, run.stderr);
  t.equal(run.stdout.trim().split('\n').length, 1 + sweep.rows.length + 1, "every run's rows");
});

t.test('--from with a measuring setting, or a file without a sweep: exit 2 naming the flag', async (t) => {
  const mixed = bench('--from', file, '--slots', '2');
  t.equal(mixed.status, 2);
  t.match(mixed.stderr, /--slots: measures a sweep; --from writes one measured before/);
  const notSweep = join(dir, 'other.json');
  writeFileSync(notSweep, '{"runs": {}}');
  const wrong = bench('--from', notSweep);
  t.equal(wrong.status, 2);
  t.match(wrong.stderr, /--from: .*holds no sweep/);
});
