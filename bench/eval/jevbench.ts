// JevBench (PyPI jevbench 0.1.0, Apache-2.0) against the service over the System One wire.
// Accuracy: each jevbench-240 case's base request (its state and questions as the package ships
// them) against JevBench's gold (data/gold.jsonl of its repository at a pinned commit, checked by
// sha256; answers the gold calls "unknown" left out), scored as the leaderboard scores it: the
// argmax, ties shared; by kind and by domain. Coherence (--coherence, instead of accuracy):
// `jevbench eval` on jevbench-mini (1,248 requests, several hours on 2 cores), all of it or the
// dimensions named, resumable through its request cache in .cache/jevbench/, which keeps the
// answers of each version of what decides them (src/, native/, the build's pins, the model) apart.
// Writes its run into bench/results/jevbench.json, and docs/jevbench.md from the latest runs: the
// accuracy and each dimension beside the leaderboard's rows.
//
//   node dist/bench/eval/jevbench.js [--per-domain N] [--gold FILE]
//   node dist/bench/eval/jevbench.js --coherence [--dimensions BAT,CHO] [--concurrency N]
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { pythonClients } from '../../test/helpers/python-clients.js';
import { baseCases, gold, GOLD } from './jevbench-cases.js';
import { post, recordRun, ROOT as root, serveService } from '../harness.js';

const { values } = parseArgs({
  options: {
    'per-domain': { type: 'string' },
    coherence: { type: 'boolean', default: false },
    dimensions: { type: 'string' },
    concurrency: { type: 'string' },
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
const DIMENSIONS = ['REP', 'BAT', 'MEA', 'LOG', 'CHO'];

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

type Tally = { right: number; of: number };
const tally = () => ({ right: 0, of: 0 });
const pct = (t: Tally) => (t.of === 0 ? '-' : `${((100 * t.right) / t.of).toFixed(1)}%`);

/** A run's record in bench/results/jevbench.json (`date` is recordRun's): accuracy, or some dimensions' coherence. */
interface AccuracyRun {
  date: string;
  machine: string;
  cases: number;
  perDomain: number | null;
  accuracy: { all: Tally; byKind: Record<string, Tally>; byDomain: Record<string, Tally> };
  medianSecondsPerCase: number;
}
interface CoherenceRun {
  date: string;
  machine: string;
  revision: string;
  coherence: {
    pillars: Record<string, number | null>;
    groups: Record<string, number | null>;
    relations: Record<string, number | null>;
    requests: number;
    wallSeconds: number;
    printed: string;
  };
}

const clients = pythonClients();
const config = loadConfig(process.env, { port: 0, logLevel: 'silent', audio: 'off' });
const server = await serveService(await openService(config), config);
const url = `${server.url}/v1/systemone`;
const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${cpus().length} cores`;
try {
  if (values.coherence) recordRun('jevbench', await coherence());
  else recordRun('jevbench', await accuracy());
} finally {
  await server.close();
}
const doc = document();
writeFileSync(join(root, 'docs', 'jevbench.md'), doc);
console.log(doc);

/** Each base case's answers against the gold, by kind and by domain. */
async function accuracy(): Promise<Omit<AccuracyRun, 'date'> & { answers: unknown[] }> {
  const golds = gold(values.gold);
  const perDomain = values['per-domain'] ? Number(values['per-domain']) : Infinity;
  const cases = baseCases(perDomain);
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
  return {
    machine,
    model: config.model,
    cases: cases.length,
    perDomain: Number.isFinite(perDomain) ? perDomain : null,
    gold: { url: GOLD.url, file: values.gold ?? GOLD.cache },
    accuracy: { all, byKind, byDomain },
    medianSecondsPerCase: [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)] ?? 0,
    answers: answered,
  } as Omit<AccuracyRun, 'date'> & { answers: unknown[] };
}

/** `jevbench eval` on jevbench-mini (the dimensions named, else all), its scores and its printed tables. */
async function coherence(): Promise<Omit<CoherenceRun, 'date'>> {
  const cache = join(root, '.cache', 'jevbench');
  const rev = revision();
  const out = join(cache, `mini-${rev}-${values.dimensions ?? 'all'}.json`);
  mkdirSync(cache, { recursive: true });
  const args = [
    ...['eval', '--url', url, '--model', 'decision-machine-1', '--revision', rev, '--suite', 'jevbench-mini'],
    ...(values.dimensions ? ['--dimensions', values.dimensions] : []),
    ...(values.concurrency ? ['--concurrency', values.concurrency] : []),
    ...['--cache-dir', join(cache, 'requests'), '--out', out, '--verbose'],
  ];
  // Its progress (every 30 s) goes to our stderr as it comes; its tables are its stdout.
  const printed = await new Promise<string>((resolve, reject) => {
    const child = spawn(clients.jevbench, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout.trim()) : reject(new Error(`jevbench eval exited ${code}`)),
    );
  });
  const report = JSON.parse(readFileSync(out, 'utf8')) as {
    scores: {
      pillars: Record<string, number | null>;
      groups: Record<string, number | null>;
      relations: Record<string, number | null>;
    };
    result: { requests: number; wall_seconds: number };
  };
  const { pillars, groups, relations } = report.scores;
  return {
    machine,
    revision: rev,
    coherence: {
      pillars,
      groups,
      relations,
      requests: report.result.requests,
      wallSeconds: report.result.wall_seconds,
      printed,
    },
  };
}

/**
 * What decides the answers, as the request cache's revision: the trees of src/ and native/, the
 * build's pins (package.json, CMakeLists.txt), any uncommitted change to them, and the model. A
 * commit that changes none of them (docs, benches) keeps the cached answers.
 */
function revision(): string {
  const decides = ['src', 'native', 'package.json', 'CMakeLists.txt'];
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
  return createHash('sha256')
    .update(git('rev-parse', ...decides.map((p) => `HEAD:${p}`)))
    .update(git('diff', 'HEAD', '--', ...decides))
    .update(config.model)
    .digest('hex')
    .slice(0, 12);
}

/** docs/jevbench.md from the latest accuracy run and each dimension's latest coherence run. */
function document(): string {
  const file = join(root, 'bench', 'results', 'jevbench.json');
  const runs = existsSync(file)
    ? Object.values((JSON.parse(readFileSync(file, 'utf8')) as { runs: Record<string, unknown> }).runs)
    : [];
  const newest = <T extends { date: string }>(xs: T[]) => xs.sort((a, b) => (a.date < b.date ? 1 : -1))[0];
  const acc = newest(runs.filter((r): r is AccuracyRun => typeof r === 'object' && r !== null && 'accuracy' in r));
  const coh = runs.filter((r): r is CoherenceRun => typeof r === 'object' && r !== null && 'coherence' in r);
  // Each dimension from the newest run that scored it.
  const byDimension = new Map(
    DIMENSIONS.flatMap((d) => {
      const r = newest(coh.filter((c) => typeof c.coherence.pillars[d] === 'number'));
      return r ? [[d, r] as [string, CoherenceRun]] : [];
    }),
  );
  const score = (d: string) => {
    const x = byDimension.get(d)?.coherence.pillars[d];
    return typeof x === 'number' ? (100 * x).toFixed(1) : 'not run';
  };
  const overall =
    byDimension.size === DIMENSIONS.length
      ? (DIMENSIONS.reduce((s, d) => s + byDimension.get(d)!.coherence.pillars[d]!, 0) * 20).toFixed(1)
      : 'not all run';
  const accuracyCell = acc
    ? `**${pct(acc.accuracy.all)}** of ${acc.accuracy.all.of}${acc.perDomain === null ? '' : ` (${acc.cases} cases, ${acc.perDomain} per domain)`}`
    : 'not run';
  const table = [
    '| model | size | coherence | REP | BAT | MEA | LOG | CHO | accuracy |',
    '|---|---|---|---|---|---|---|---|---|',
    ...LEADERBOARD.map((r) => `| ${r.join(' | ')}% |`),
    `| **decision-machine-1** | 1.5B | ${overall} | ${DIMENSIONS.map(score).join(' | ')} | ${accuracyCell} |`,
  ];
  const sections = ['# JevBench', ''];
  sections.push(
    'Our row is the latest run of each part, both by `bench/eval/jevbench.ts` on the default model:',
    'the accuracy, and each coherence dimension (jevbench-mini) from the newest run that scored it.',
    "The leaderboard's rows are release 0.1.0's.",
    '',
    ...table,
  );
  if (acc) {
    sections.push(
      '',
      '## Accuracy',
      '',
      `\`node dist/bench/eval/jevbench.js${acc.perDomain === null ? '' : ` --per-domain ${acc.perDomain}`}\`, ${acc.date.slice(0, 10)}, ${acc.machine},`,
      `one case at a time (median ${acc.medianSecondsPerCase.toFixed(1)} s per case). Each case's base request against`,
      "JevBench's gold (`data/gold.jsonl`, answers it calls unknown left out), argmax with ties shared, as",
      'the leaderboard scores it.',
      '',
      '| kind | right |',
      '|---|---|',
      ...['noul', 'choice', 'score'].map(
        (k) => `| ${k} | ${pct(acc.accuracy.byKind[k]!)} of ${acc.accuracy.byKind[k]!.of} |`,
      ),
      '',
      '| domain | right |',
      '|---|---|',
      ...Object.entries(acc.accuracy.byDomain).map(([d, t]) => `| ${d} | ${pct(t)} of ${t.of} |`),
    );
  }
  for (const r of new Set(byDimension.values())) {
    const dims = DIMENSIONS.filter((d) => byDimension.get(d) === r);
    const named = Object.entries(r.coherence.pillars)
      .filter(([, x]) => typeof x === 'number')
      .map(([d]) => d);
    sections.push(
      '',
      `## Coherence: ${dims.join(', ')}`,
      '',
      `\`node dist/bench/eval/jevbench.js --coherence${named.length === DIMENSIONS.length ? '' : ` --dimensions ${named.join(',')}`}\`, ${r.date.slice(0, 10)}, ${r.machine},`,
      `revision ${r.revision}: ${r.coherence.requests} requests in ${(r.coherence.wallSeconds / 60).toFixed(0)} min. As \`jevbench eval\` prints it,`,
      'then each relation (the share of its tests whose law held within the tolerance):',
      '',
      '```',
      r.coherence.printed,
      '```',
      '',
      '| relation | held |',
      '|---|---|',
      ...Object.entries(r.coherence.relations).map(
        ([k, x]) => `| ${k} | ${typeof x === 'number' ? (100 * x).toFixed(1) : '-'} |`,
      ),
    );
  }
  return `${sections.join('\n')}\n`;
}
