// JevBench (PyPI jevbench 0.1.0, Apache-2.0) against the service over the System One wire.
// Accuracy: each jevbench-240 case's base request (its state and questions as the package ships
// them) against JevBench's gold (data/gold.jsonl of its repository at a pinned commit, checked by
// sha256; answers the gold calls "unknown" left out), scored as the leaderboard scores it: the
// argmax, ties shared; by kind and by domain. Coherence (--coherence): `jevbench eval` on
// jevbench-mini (1,248 requests, over an hour on 2 cores; resumable through its request cache in
// .cache/jevbench/), its dimension table. Writes its run into bench/results/jevbench.json, and
// docs/jevbench.md beside the leaderboard's rows.
//
//   node dist/bench/eval/jevbench.js [--per-domain N] [--coherence] [--gold FILE]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { pythonClients, run } from '../../test/helpers/python-clients.js';
import { baseCases, gold, GOLD } from './jevbench-cases.js';
import { post, recordRun, ROOT as root, serveService } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-domain': { type: 'string' },
    coherence: { type: 'boolean', default: false },
    gold: { type: 'string' },
  },
});

// The leaderboard's rows (jevbench.github.io, release 0.1.0): coherence, its five dimensions, accuracy.
const LEADERBOARD = [
  ['Open-Jev-9B', '9.7B', 83.9, 81.9, 100, 50.2, 87.1, 100, 88.4],
  ['decider-4b v2.1', '4.2B', 78.4, 80.3, 100, 52.5, 78.8, 80.6, 88.6],
  ['rsi-jev-2b', '2.3B', 72.2, 73.1, 100, 32.1, 73.8, 81.9, 85.2],
  ['decider-2b', '1.9B', 71.7, 78.6, 100, 38.0, 67.1, 75.0, 84.9],
  ['OpenThai-SystemOne', '0.75B', 64.2, 76.9, 70.8, 39.7, 61.3, 72.2, 82.4],
  ['Von 1.3 (encoder)', '395M', 75.9, 83.1, 100, 16.4, 80.0, 100, 72.2],
  ['Laya (encoder)', '421M', 56.5, 52.5, 100, 16.4, 67.9, 45.8, 70.8],
] as const;

type Answer = { type: 'noul'; noul: number } | { type: 'choice' | 'score'; probabilities: Record<string, number> };

/** The share of credit an answer earns against the gold: the argmax, ties shared. */
export function credit(answer: Answer, gold: boolean | string | number): number {
  if (answer.type === 'noul') {
    if (answer.noul === 0.5) return 0.5;
    return answer.noul > 0.5 === gold ? 1 : 0;
  }
  const p = Object.entries(answer.probabilities);
  const top = Math.max(...p.map(([, x]) => x));
  const best = p.filter(([, x]) => x === top).map(([k]) => k);
  return best.includes(String(gold)) ? 1 / best.length : 0;
}

const clients = pythonClients();
const golds = gold(values.gold);
const perDomain = values['per-domain'] ? Number(values['per-domain']) : Infinity;
const cases = baseCases(perDomain);

const config = loadConfig(process.env, { port: 0, logLevel: 'silent', audio: 'off' });
const server = await serveService(await openService(config), config);
const url = `${server.url}/v1/systemone`;

type Tally = { right: number; of: number };
const tally = () => ({ right: 0, of: 0 });
const byKind: Record<string, Tally> = { noul: tally(), choice: tally(), score: tally() };
const byDomain: Record<string, Tally> = {};
const all = tally();
const seconds: number[] = [];
const answered: { id: string; answers: Record<string, Answer> }[] = [];
for (const [n, c] of cases.entries()) {
  const started = performance.now();
  const res = await post(url, { model: 'decision-machine-1', state: c.state, questions: c.questions });
  const { answers } = res.json<{ answers: Record<string, Answer> }>();
  seconds.push((performance.now() - started) / 1000);
  answered.push({ id: c.id, answers });
  for (const [id, q] of Object.entries(c.questions)) {
    const want = golds.get(c.id)?.[id];
    if (want === undefined || want === 'unknown') continue;
    const got = credit(answers[id]!, want);
    for (const t of [byKind[q.type]!, (byDomain[c.domain] ??= tally()), all]) {
      t.right += got;
      t.of += 1;
    }
  }
  if (n % 10 === 9) console.error(`${n + 1} of ${cases.length} cases, ${pct(all)} so far`);
}
/** The checkout's commit: the request cache keeps each version's answers apart. */
function revision(): string {
  return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
}

function pct(t: Tally): string {
  return t.of === 0 ? '-' : `${((100 * t.right) / t.of).toFixed(1)}%`;
}

// The coherence report's tables as jevbench prints them (dimension, then group).
let coherence: string | undefined;
if (values.coherence) {
  const cache = join(root, '.cache', 'jevbench');
  mkdirSync(cache, { recursive: true });
  const r = await run(
    clients.jevbench,
    [
      ...['eval', '--url', url, '--model', 'decision-machine-1', '--revision', revision(), '--suite', 'jevbench-mini'],
      ...['--cache-dir', join(cache, 'requests'), '--out', join(cache, 'mini.json')],
    ],
    {},
    6 * 3600_000,
  );
  if (r.code !== 0) throw new Error(`jevbench eval: ${r.stderr}`);
  coherence = r.stdout.trim();
}
await server.close();

const date = new Date().toISOString().slice(0, 10);
const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${cpus().length} cores`;
const median = [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)] ?? 0;
const result = {
  date,
  machine,
  model: config.model,
  cases: cases.length,
  perDomain: Number.isFinite(perDomain) ? perDomain : null,
  gold: { url: GOLD.url, file: values.gold ?? GOLD.cache },
  accuracy: { all, byKind, byDomain },
  medianSecondsPerCase: median,
  ...(coherence ? { coherence } : {}),
  answers: answered,
};
recordRun('jevbench', result);

const ours = coherence ? ['below', '', '', '', '', ''] : ['not run', '', '', '', '', ''];
const table = [
  '| model | size | coherence | REP | BAT | MEA | LOG | CHO | accuracy |',
  '|---|---|---|---|---|---|---|---|---|',
  ...LEADERBOARD.map((r) => `| ${r.join(' | ')}% |`),
  `| **decision-machine-1** (${date}) | 1.5B | ${ours.join(' | ')} | **${pct(all)}** of ${all.of}${Number.isFinite(perDomain) ? ` (${cases.length} cases, ${perDomain} per domain)` : ''} |`,
];
const kinds = ['noul', 'choice', 'score'].map((k) => `| ${k} | ${pct(byKind[k]!)} of ${byKind[k]!.of} |`);
const domains = Object.entries(byDomain).map(([d, t]) => `| ${d} | ${pct(t)} of ${t.of} |`);
const doc = `# JevBench

\`node dist/bench/eval/jevbench.js${Number.isFinite(perDomain) ? ` --per-domain ${perDomain}` : ''}${values.coherence ? ' --coherence' : ''}\`, ${date}, ${machine}, default model, one case at a time
(median ${median.toFixed(1)} s per case). Accuracy is each case's base request against JevBench's gold
(\`data/gold.jsonl\`, answers it calls unknown left out), argmax with ties shared, as the
leaderboard scores it; the leaderboard's rows are release 0.1.0's.

${table.join('\n')}

| kind | right |
|---|---|
${kinds.join('\n')}

| domain | right |
|---|---|
${domains.join('\n')}
${coherence ? `\nCoherence on jevbench-mini, as \`jevbench eval\` prints it:\n\n\`\`\`\n${coherence}\n\`\`\`\n` : ''}`;
writeFileSync(join(root, 'docs', 'jevbench.md'), doc);
console.log(doc);
