// decision-machine bench on the real model, as small as a sweep gets: two capabilities, two
// concurrencies, two repetitions of two requests. Its rows hold together (answered requests x
// decisions per request = decisions, rates agree with each other, p50 <= p90 <= p99), the sweep
// writes as JSON, markdown, CSV and JSON lines with the same figures, the knee chart has a line
// per configuration; and --url measures a running server the same way.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from '../../src/bench/report.js';
import type { Row, Sweep } from '../../src/bench/sweep.js';
import { testModelPath } from '../helpers/model.js';
import { startServer } from '../helpers/server.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const modelPath = await testModelPath();
const dir = mkdtempSync(join(tmpdir(), 'dm-bench-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const env = {
  ...process.env,
  DM_MODEL_PATH: modelPath,
  DM_ENCODER: 'none',
  DM_CONTEXT: '4096',
  DM_PROMPT_CACHE_MIB: '64',
  DM_OFFLINE: 'on',
};
/** The command, run apart (this process keeps serving the --url test's server meanwhile). */
async function bench(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const child = spawn('node', [cli, 'bench', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise((resolve) => child.once('exit', resolve));
  t.equal(status, 0, stderr);
  return { stdout, stderr };
}

const TINY = ['--requests', '2', '--warmup', '1', '--text-chars', '120'];
const svg = join(dir, 'knee.svg');
const run = await bench([
  ...['--capabilities', 'yes-no,classify', '--slots', '2', '--threads', '2', '--concurrency', '1,2'],
  ...['--batch', '2', '--questions', '2', '--labels', '3', '--repetitions', '2', ...TINY],
  ...['--output', 'json', '--svg', svg],
]);
const sweep = JSON.parse(run.stdout) as Sweep;

/** Rows measured as asked, consistent in themselves. */
function consistent(t: Test, rows: Row[], repetitions: number, requests: number) {
  for (const r of rows) {
    const name = `${r.capability}, ${r.concurrency} client(s)`;
    t.same([r.refused, r.errors], [0, 0], `${name}: nothing refused or failed`);
    t.equal(r.requests, repetitions * requests, `${name}: every request answered`);
    t.equal(r.requests * r.decisionsPerRequest, r.decisions, `${name}: requests x decisions per request = decisions`);
    const ratio = r.decisionsPerSecond.mean / r.requestsPerSecond.mean;
    t.ok(Math.abs(ratio - r.decisionsPerRequest) < 1e-9, `${name}: decisions/s = requests/s x decisions per request`);
    t.ok(r.p50Ms.mean <= r.p90Ms.mean && r.p90Ms.mean <= r.p99Ms.mean, `${name}: p50 <= p90 <= p99`);
    t.ok(r.inputTokensPerSecond.mean > 0, `${name}: input tokens counted`);
  }
}

t.test('the rows: one per setting, answered, consistent', async (t) => {
  t.same(
    sweep.rows.map((r) => [r.capability, r.concurrency, r.batch, r.questions, r.labels]),
    [
      ['yes-no', 1, 2, 2, null],
      ['yes-no', 2, 2, 2, null],
      ['classify', 1, 2, null, 3],
      ['classify', 2, 2, null, 3],
    ],
    'the cross product, with "-" where a capability does not read a setting',
  );
  t.same(
    sweep.rows.map((r) => r.decisionsPerRequest),
    [4, 4, 2, 2],
    'yes-no: 2 texts x 2 statements; classify: 2 texts',
  );
  consistent(t, sweep.rows, 2, 2);
  for (const r of sweep.rows) {
    t.same([r.slots, r.threads, r.repetitions], [2, 2, 2]);
    t.ok(r.cpuPercent && r.cpuPercent.mean > 0, 'CPU utilisation');
    t.ok(r.rssMiB && r.rssMiB.mean > 500, 'resident memory: the model is in it');
    t.ok(r.slotWaitP50Ms && r.slotWaitP50Ms.mean >= 0, 'slot wait from the metrics');
  }
  t.match(run.stderr, /decision-machine yes-no \(slots 2, threads 2, concurrency 1/, 'a progress line per row');
});

t.test('every output format carries the same rows', async (t) => {
  const md = format(sweep, 'md').split('\n');
  const table = md.filter((l) => l.startsWith('|'));
  t.equal(table.length, 2 + sweep.rows.length, 'header, alignment, a line per row');
  t.match(table[0], /\| capability \| slots \| threads \| clients \|.*\| decisions\/s \|.*\| p99 ms \|/);
  t.match(table[2], /\| yes-no \| 2 \| 2 \| 1 \| 2 \| 2 \| 120 \| - \| [\d.]+ ± [\d.]+ \|/);
  t.match(md.join('\n'), sweep.model, 'the model under the table');

  const csv = format(sweep, 'csv').trim().split('\n');
  const header = csv[0]!.split(',');
  t.equal(csv.length, 1 + sweep.rows.length);
  for (const [i, line] of csv.slice(1).entries()) {
    const cells = line.split(',');
    t.equal(cells.length, header.length, 'a cell per column');
    const at = (name: string) => cells[header.indexOf(name)];
    t.equal(Number(at('decisions')), sweep.rows[i]!.decisions);
    t.equal(Number(at('decisionsPerSecondMean')), sweep.rows[i]!.decisionsPerSecond.mean);
    t.equal(at('questions'), sweep.rows[i]!.questions === null ? '' : String(sweep.rows[i]!.questions));
  }

  const jsonl = format(sweep, 'jsonl').trim().split('\n');
  t.same(
    jsonl.map((l) => JSON.parse(l)),
    sweep.rows,
  );
});

t.test('the knee chart: a line per configuration, a point per row', async (t) => {
  const chart = readFileSync(svg, 'utf8');
  t.match(chart, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  t.equal(chart.match(/<polyline /g)?.length, 2, 'yes-no and classify');
  t.equal(chart.match(/<circle /g)?.length, sweep.rows.length);
  t.match(chart, /yes-no, 2 slots, 2 threads, batch 2, 2 q, 120 ch/);
});

t.test('--url: a running server, measured over HTTP with its own slots', async (t) => {
  const server = await startServer(undefined, { modelPath });
  t.teardown(server.close);
  const remote = await bench([
    ...['--url', server.url, '--pid', String(process.pid), '--capabilities', 'yes-no', '--concurrency', '2'],
    ...['--repetitions', '1', ...TINY, '--output', 'jsonl', '--recommend', '--p99-ms', '3600000'],
  ]);
  const rows = remote.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  t.equal(rows.length, 1);
  consistent(t, rows, 1, 2);
  t.same([rows[0]!.slots, rows[0]!.threads], [2, null], "slots from the server's GET /, threads unknown");
  t.equal(rows[0]!.slotWaitP50Ms, null, 'this server serves no /metrics');
  t.ok(rows[0]!.cpuPercent!.mean > 0, 'CPU of the process --pid names');
  t.match(
    remote.stderr,
    /Most decisions\/s at p99 <= 3600000 ms:\n- yes-no \(1 text per call, 1 question, 120 characters\):/,
  );
  t.match(remote.stderr, /the deployment as it runs/);
});
