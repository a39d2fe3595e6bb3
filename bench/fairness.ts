// Fair admission with keys on: key B sends small real decisions one after another, alone (idle),
// then while key A floods with C clients that resend at once whatever they get (200, 429 or
// 529); the two phases alternate for R rounds, so load from elsewhere on a shared machine falls on
// both alike. Starts its own service (DM_AUTH=on, a temporary SQLite store; other DM_*
// settings from the environment, e.g. DM_KEY_MAX_INFLIGHT) and issues the two keys. Reports B's
// statuses and p50/p95 in both phases, A's statuses, as a table; writes its run (by command line
// and the DM_* settings below) into bench/results/fairness.json.
//
//   node dist/bench/fairness.js --requests 10 --clients 16 --rounds 3
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile } from '../src/bench/stats.js';
import { post, recordRun, SMALL_DECISIONS } from './harness.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '12' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
  },
});
const cli = new URL('../src/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dm-fairness-'));
const env = { ...process.env, DM_AUTH: 'on', DM_AUDIO: 'off', DM_DATABASE_URL: join(dir, 'service.db') };
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  });
});
const issue = (org: string) =>
  execFileSync('node', [cli, 'keys', 'issue', '--org', org, '--mode', 'test'], { env, encoding: 'utf8' })
    .split(/\s+/)
    .find((w) => w.startsWith('test_sk-'))!;
const [keyA, keyB] = [issue('flood'), issue('quiet')];

const server = spawn('node', [cli, 'serve'], {
  env: { ...env, PORT: String(port) },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let config: Record<string, unknown> = {};
await new Promise<void>((resolve, reject) => {
  let buffered = '';
  server.stderr.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (const line of buffered.split('\n').slice(0, -1)) {
      if (line.includes('"configuration"')) config = JSON.parse(line).config;
      if (line.includes('"msg":"ready"')) resolve(); // the model is loaded
    }
    buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
  });
  server.once('exit', (code) => reject(new Error(`the service exited (${code})`)));
});
const api = `http://127.0.0.1:${port}/v1/decision-machine-1`;

async function call(key: string, i: number): Promise<{ status: number; ms: number }> {
  const [name, body] = SMALL_DECISIONS[i % SMALL_DECISIONS.length]!;
  const { status, ms } = await post(`${api}/${name}`, body, { headers: { authorization: `Bearer ${key}` }, ok: false });
  return { status, ms };
}

const count = (statuses: number[]) =>
  statuses.reduce<Record<string, number>>((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {});
const pct = (ms: number[], q: number) => (ms.length === 0 ? 0 : Math.round(percentile(ms, q * 100)));

type Phase = { statuses: number[]; ms: number[] };
const summary = (p: Phase) => ({ statuses: count(p.statuses), p50ms: pct(p.ms, 0.5), p95ms: pct(p.ms, 0.95) });

async function quiet(into: Phase): Promise<void> {
  for (let i = 0; i < Number(values.requests); i++) {
    const r = await call(keyB, i);
    into.statuses.push(r.status);
    if (r.status === 200) into.ms.push(r.ms);
  }
}

await call(keyB, 0); // warm-up: first prefill of each capability's instructions
await call(keyB, 1);
await call(keyB, 2);
const idlePhase: Phase = { statuses: [], ms: [] };
const floodPhase: Phase = { statuses: [], ms: [] };
const floodStatuses: number[] = [];
const rounds: { idleP50ms: number; floodP50ms: number }[] = [];
for (let round = 0; round < Number(values.rounds); round++) {
  const idleRound: Phase = { statuses: [], ms: [] };
  await quiet(idleRound);
  let flooding = true;
  const flood = Array.from({ length: Number(values.clients) }, async (_, k) => {
    for (let i = k; flooding; i++) floodStatuses.push((await call(keyA, i)).status);
  });
  await new Promise((r) => setTimeout(r, 2000)); // the flood is under way
  const floodRound: Phase = { statuses: [], ms: [] };
  await quiet(floodRound);
  flooding = false;
  await Promise.all(flood);
  rounds.push({ idleP50ms: pct(idleRound.ms, 0.5), floodP50ms: pct(floodRound.ms, 0.5) });
  for (const [from, to] of [
    [idleRound, idlePhase],
    [floodRound, floodPhase],
  ] as const) {
    to.statuses.push(...from.statuses);
    to.ms.push(...from.ms);
  }
}
const idle = summary(idlePhase);
const loaded = summary(floodPhase);
const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
const refusals = Object.fromEntries(
  [...metrics.matchAll(/^dm_refusals_total\{reason="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
);
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
rmSync(dir, { recursive: true, force: true });

const result = {
  slots: config.DM_SLOTS,
  queue: config.DM_QUEUE,
  keyMaxInflight: config.DM_KEY_MAX_INFLIGHT,
  clientsA: Number(values.clients),
  requestsB: Number(values.requests),
  rounds,
  idle,
  flood: { ...loaded, ratioP50: Math.round((loaded.p50ms / idle.p50ms) * 100) / 100, keyA: count(floodStatuses) },
  refusals,
};
recordRun('fairness', result, {
  env: ['DM_KEY_MAX_INFLIGHT', 'DM_RATE_LIMIT', 'DM_TOKEN_LIMIT', 'DM_SLOTS', 'DM_QUEUE'],
});
console.log(`| key B (${values.rounds} rounds of ${values.requests}) | statuses | p50 ms | p95 ms |
|---|---|---|---|
| alone | ${JSON.stringify(idle.statuses)} | ${idle.p50ms} | ${idle.p95ms} |
| key A flooding (${values.clients} clients; A got ${JSON.stringify(result.flood.keyA)}) | ${JSON.stringify(loaded.statuses)} | ${loaded.p50ms} (${result.flood.ratioP50}x) | ${loaded.p95ms} |

refusals by reason (GET /metrics): ${JSON.stringify(refusals)}
p50 per round, idle -> flood: ${rounds.map((r) => `${r.idleP50ms} -> ${r.floodP50ms} ms`).join(', ')}`);
