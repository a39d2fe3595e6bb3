// JevBench (PyPI jevbench 0.1.0, Apache-2.0) against the service over the System One wire.
// Accuracy: each jevbench-240 case's base request (its state and questions as the package ships
// them) against JevBench's gold (data/gold.jsonl of its repository at a pinned commit, checked by
// sha256; answers the gold calls "unknown" left out), scored as the leaderboard scores it: the
// argmax, ties shared; by kind and by domain (all 240 cases: about 80 min on 2 cores).
// Coherence (--coherence, instead of accuracy): `jevbench eval` on jevbench-mini (1,248 requests
// by its manifest, about five hours on 2 cores), all of it, the dimensions named, or the relations
// named (a change measured on the laws it is for; reported apart, not as a dimension). Both resume
// where a stopped run left off: the answers are kept in .cache/jevbench/ under a revision of what
// decides them (src/, native/, the build's pins, the model), so a commit that changes none of them
// keeps them. jevbench keys its request cache on the URL too, so the coherence run serves on a fixed
// port (--port), and the base requests the accuracy run answered under the same revision are put in
// that cache before it starts (the same request, so the same answers). Writes its run into
// bench/results/jevbench.json, and docs/jevbench.md from the latest runs: the accuracy and each
// dimension beside the leaderboard's rows.
//
//   node dist/bench/eval/jevbench.js [--per-domain N] [--gold FILE] [--revision REV]
//       (--revision: score the answers an earlier revision left in the cache, asking nothing)
//   node dist/bench/eval/jevbench.js --coherence [--dimensions BAT,CHO | --relations option_permutation]
//       [--concurrency N] [--port 8791]
//   node dist/bench/eval/jevbench.js --doc        docs/jevbench.md again from the recorded runs
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
import { post, recordedRuns, recordRun, ROOT as root, serveService } from '../harness.js';
import { jevbenchDoc, pct, type AccuracyRun, type CoherenceRun, type Tally } from './jevbench-doc.js';

const { values } = parseArgs({
  options: {
    'per-domain': { type: 'string' },
    coherence: { type: 'boolean', default: false },
    dimensions: { type: 'string' },
    relations: { type: 'string' },
    concurrency: { type: 'string' },
    port: { type: 'string', default: '8791' },
    gold: { type: 'string' },
    revision: { type: 'string' },
    doc: { type: 'boolean', default: false },
  },
});

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

const tally = () => ({ right: 0, of: 0 });

const clients = pythonClients();
const config = loadConfig(process.env, {
  port: values.coherence ? Number(values.port) : 0,
  logLevel: 'silent',
  audio: 'off',
});
const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${cpus().length} cores`;
let url = '';
if (values.revision && !values.coherence) recordRun('jevbench', await accuracy());
else if (!values.doc) {
  const server = await serveService(await openService(config), config);
  url = `${server.url}/v1/systemone`;
  try {
    if (values.coherence) recordRun('jevbench', await coherence());
    else recordRun('jevbench', await accuracy());
  } finally {
    await server.close();
  }
}
const doc = jevbenchDoc(recordedRuns('jevbench'));
writeFileSync(join(root, 'docs', 'jevbench.md'), doc);
console.log(doc);

/**
 * Each base case's answers against the gold, by kind and by domain. The cases go round the domains
 * (the first of each, then the second, ...), and each one's answers are kept under the revision
 * (.cache/jevbench/answers/), with the seconds it took when it was asked: a stopped run resumes,
 * and a smaller --per-domain is read from what a larger one asked.
 */
async function accuracy(): Promise<Omit<AccuracyRun, 'date'> & { answers: unknown[] }> {
  const golds = gold(values.gold);
  const perDomain = values['per-domain'] ? Number(values['per-domain']) : Infinity;
  const rank = new Map<string, number>();
  const cases = baseCases(perDomain)
    .map((c) => {
      const r = rank.get(c.domain) ?? 0;
      rank.set(c.domain, r + 1);
      return { c, r };
    })
    .sort((a, b) => a.r - b.r)
    .map(({ c }) => c);
  const rev = values.revision ?? revision();
  const kept = join(root, '.cache', 'jevbench', 'answers', rev);
  mkdirSync(kept, { recursive: true });
  const byKind: Record<string, Tally> = { noul: tally(), choice: tally(), score: tally() };
  const byDomain: Record<string, Tally> = {};
  const all = tally();
  const seconds: number[] = [];
  const answered: { id: string; answers: Record<string, Answer> }[] = [];
  for (const [n, c] of cases.entries()) {
    const file = join(kept, `${c.id}.json`);
    if (!existsSync(file)) {
      if (values.revision) throw new Error(`${c.id}: not answered at revision ${rev} (${file})`);
      const started = performance.now();
      const res = await post(url, { model: 'decision-machine-1', state: c.state, questions: c.questions });
      const { answers } = res.json<{ answers: Record<string, Answer> }>();
      writeFileSync(file, JSON.stringify({ answers, seconds: (performance.now() - started) / 1000 }));
    }
    const asked = JSON.parse(readFileSync(file, 'utf8')) as { answers: Record<string, Answer>; seconds: number };
    const { answers } = asked;
    seconds.push(asked.seconds);
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
    revision: rev,
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
  const out = join(cache, `mini-${rev}-${values.relations ?? values.dimensions ?? 'all'}.json`);
  mkdirSync(cache, { recursive: true });
  const seeded = seedBases(join(cache, 'requests'), rev);
  if (seeded > 0) console.error(`${seeded} base requests put in the request cache from the accuracy run`);
  const args = [
    ...['eval', '--url', url, '--model', 'decision-machine-1', '--revision', rev, '--suite', 'jevbench-mini'],
    ...(values.dimensions ? ['--dimensions', values.dimensions] : []),
    ...(values.relations ? ['--relations', values.relations] : []),
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
    result: { requests: number; cache_hits: number; wall_seconds: number };
  };
  const { pillars, groups, relations } = report.scores;
  return {
    machine,
    revision: rev,
    relations: values.relations?.split(',') ?? null,
    coherence: {
      pillars,
      groups,
      relations,
      requests: report.result.requests,
      cacheHits: report.result.cache_hits,
      wallSeconds: report.result.wall_seconds,
      printed,
    },
  };
}

/**
 * Puts each base request the accuracy run answered under revision `rev` into jevbench's request
 * cache for this URL: jevbench's own executor asks a backend of the same name that answers from the
 * accuracy run, so the key is jevbench's (over the case as it parses it). Returns how many it put; a
 * request already cached is read from the cache, and the recorded answer is not asked for.
 */
function seedBases(requests: string, rev: string): number {
  const answered = join(root, '.cache', 'jevbench', 'answers', rev);
  if (!existsSync(answered)) return 0;
  const script = `
import json, os, sys
import jevbench as jb
from jevbench.backends import Executor
url, rev, requests, answered = sys.argv[1:]
recorded = {}
def answer(state, questions):
    return recorded["answers"]
name = jb.systemone(url, "decision-machine-1", revision=rev).name
executor = Executor(jb.from_callable(answer, name=name), cache_dir=requests)
put = 0
for case in jb.load_suite("jevbench-mini").cases:
    file = os.path.join(answered, case.id + ".json")
    if not os.path.exists(file):
        continue
    with open(file, encoding="utf-8") as f:
        recorded["answers"] = json.load(f)["answers"]
    calls = executor.calls
    executor.ask(case.state, case.questions)
    put += executor.calls - calls
print(put)
`;
  return Number(
    execFileSync(clients.python, ['-c', script, url, rev, requests, answered], { encoding: 'utf8' }).trim(),
  );
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
