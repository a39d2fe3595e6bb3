// Accuracy and calibration on labelled decisions, per set: any JSONL whose lines carry `id`, `cap`,
// `req` (the request body) and `expect` (the gold), with optional `set` (else the file's name) and
// `answer_any` (every accepted answer span). Prints a table, writes its run (by command line, every
// decision's probabilities) into bench/results/eval.json, or the run alone to --out FILE (what
// bench/train/calibrate.ts reads), and optionally a reliability diagram (SVG). --after runs
// another capability on each item's text first, so the item is decided as a pipeline's second step.
//
//   node dist/bench/eval/eval.js [--file F]... [--set a,b] [--cap yes-no,classify,...] [--half fit|report]
//       [--limit N] [--permute K] [--after] [--raw] [--out FILE] [--svg FILE] [--model ID | --model-path FILE]
//
// Default files: ../shared/eval/{dev-decisions,pool-dev,external/dev}.jsonl and bench/eval/extra-decisions.jsonl.
// --half keeps the items whose id hashes into that half (fit: even, report: odd), so calibration is
// fitted on one and reported on the other. --limit keeps N items per set (in hash order, so a subset
// is spread over the set). --permute K also runs classify and classify-tree with the labels in K
// other orders and reports the share of decisions that change. --raw states the uncalibrated
// probabilities (what bench/train/calibrate.ts fits on). The cap names `answer-20k` and
// `yes-no-20k` run those cases set in a 20,000-character text.
import { SHARED_EVAL } from './dev-cases.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { calibration, IDENTITY } from '../../src/decisions/distribution.js';
import { fnv1a } from '../../src/decisions/hash.js';
import { open, type DecisionMachine } from '../../src/index.js';
import { DEFAULT_DECISION_MODEL } from '../../src/models/manifest.js';
import { judges, type Decision } from './judges.js';
import { brier, ece, reliabilitySvg, type Outcome } from './metrics.js';
import { recordRun } from '../harness.js';

interface Case {
  id: string;
  set?: string;
  cap: string;
  req: Record<string, unknown>;
  expect: Record<string, unknown>;
  answer_any?: (string | null)[]; // top level, or inside `expect` as external/dev.jsonl has it
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DEFAULT_FILES = [
  join(SHARED_EVAL, 'dev-decisions.jsonl'),
  `${root}bench/eval/extra-decisions.jsonl`,
  join(SHARED_EVAL, 'pool-dev.jsonl'),
  join(SHARED_EVAL, 'external/dev.jsonl'),
];

const { values } = parseArgs({
  options: {
    file: { type: 'string', multiple: true },
    set: { type: 'string' },
    cap: { type: 'string', default: 'all' },
    half: { type: 'string' },
    limit: { type: 'string' },
    permute: { type: 'string', default: '0' },
    after: { type: 'boolean', default: false },
    raw: { type: 'boolean', default: false },
    out: { type: 'string' },
    svg: { type: 'string' },
    model: { type: 'string' },
    'model-path': { type: 'string' },
  },
});
if (values.half && values.half !== 'fit' && values.half !== 'report') throw new Error('--half is fit or report');

function readCases(files: string[]): Case[] {
  return files.flatMap((file) => {
    if (!existsSync(file)) throw new Error(`no such file: ${file}`);
    const set = basename(file, '.jsonl');
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Case)
      .map((c) => ({ ...c, set: c.set ?? set }));
  });
}

// Long-text variants: each case's text set in the middle of a 20,000-character haystack of
// sentences on an unrelated subject (lunar craters), so the truth of a statement and the answer
// to a question do not change, and the encoder must find the window that matters.
const LONG: Record<string, string> = { 'answer-20k': 'answer', 'yes-no-20k': 'yes-no' };

function inHaystack(text: string): string {
  const crater = (i: number) =>
    `Crater ${String.fromCharCode(65 + (i % 26))}-${100 + i} on the far side of the Moon is ${12 + ((i * 37) % 180)} kilometres across and its rim rises ${1 + (i % 5)} kilometres above the floor. `;
  let hay = '';
  for (let i = 0; hay.length < 20_000; i++) hay += crater(i);
  const before = Math.floor((20_000 - text.length - 2) * 0.55);
  const after = 20_000 - text.length - 2 - before;
  return `${hay.slice(0, before)} ${text} ${hay.slice(before, before + after)}`;
}

/** The cases to run for one capability name, per set, after --set, --half and --limit. */
function selected(all: Case[], cap: string): Case[] {
  const base = LONG[cap] ?? cap;
  const sets = values.set?.split(',');
  const limit = values.limit ? Number(values.limit) : Infinity;
  const keep = all.filter(
    (c) =>
      c.cap === base &&
      (!sets || sets.includes(c.set!)) &&
      (!values.half || fnv1a(c.id) % 2 === (values.half === 'fit' ? 0 : 1)) &&
      (!LONG[cap] || typeof c.req.text === 'string'),
  );
  const bySet = new Map<string, Case[]>();
  for (const c of keep) bySet.set(c.set!, [...(bySet.get(c.set!) ?? []), c]);
  return [...bySet.values()].flatMap((cs) =>
    (Number.isFinite(limit) ? [...cs].sort((a, b) => fnv1a(a.id) - fnv1a(b.id)).slice(0, limit) : cs).map((c) =>
      LONG[cap] ? { ...c, set: `${c.set}/20k`, req: { ...c.req, text: inHaystack(String(c.req.text)) } } : c,
    ),
  );
}

/** A permutation of n items that differs from the identity: cyclic shifts first, then reversals of them. */
function order(n: number, k: number): number[] {
  const shift = (k % Math.max(1, n - 1)) + 1;
  const shifted = Array.from({ length: n }, (_, i) => (i + shift) % n);
  return k < n - 1 ? shifted : shifted.reverse();
}

function permutedLabels(labels: string[] | Record<string, string>, k: number): string[] | Record<string, string> {
  if (Array.isArray(labels)) return order(labels.length, k).map((i) => labels[i]!);
  const entries = Object.entries(labels);
  return Object.fromEntries(order(entries.length, k).map((i) => entries[i]!));
}

function permutedTree(tree: Record<string, any>, k: number): Record<string, any> {
  const entries = Object.entries(tree).map(
    ([name, node]) =>
      [
        name,
        typeof node === 'object' && node.labels ? { ...node, labels: permutedTree(node.labels, k) } : node,
      ] as const,
  );
  return Object.fromEntries(order(entries.length, k).map((i) => entries[i]!));
}

/** The decided label (or path) of a classify / classify-tree output, compared across orders. */
async function flips(dm: DecisionMachine, c: Case, first: any, k: number): Promise<number> {
  let changed = 0;
  for (let j = 0; j < k; j++) {
    if (c.cap === 'classify') {
      const out: any = await dm.classify({ ...(c.req as any), labels: permutedLabels(c.req.labels as any, j) });
      changed += out.label === first.label ? 0 : 1;
    } else {
      const out: any = await dm.classifyTree({ ...(c.req as any), tree: permutedTree(c.req.tree as any, j) });
      changed += out.path.join('\u0000') === first.path.join('\u0000') ? 0 : 1;
    }
  }
  return changed;
}

/** --after: another capability decides about the same text first, as in a pipeline (its answer is not judged). */
async function decideBefore(dm: DecisionMachine, cap: string, text: string): Promise<void> {
  if (cap === 'yes-no') await dm.classify({ text, labels: ['request', 'report', 'other'] } as any);
  else await dm.yesNo({ text, statement: 'The text asks for something.' } as any);
}

const p50 = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : 0);

if (values.raw) Object.assign(calibration, IDENTITY);
const dm = await open({
  ...(values.model ? { model: values.model } : {}),
  ...(values['model-path'] ? { modelPath: values['model-path'] } : {}),
  logLevel: 'silent',
});
const model = values['model-path'] ?? values.model ?? DEFAULT_DECISION_MODEL;
const caps = values.cap === 'all' ? Object.keys(judges) : values.cap!.split(',');
const files = values.file ?? DEFAULT_FILES;
const all = readCases(files);
const permute = Number(values.permute);

interface Row {
  set: string;
  capability: string;
  cases: number;
  decisions: number;
  correct: number;
  accuracy: number;
  f1?: number;
  p50Ms: number;
  ece?: number;
  brier?: number;
  flipRate?: number;
  permutedDecisions?: number;
  items: { id: string; ms: number; decisions: Decision[] }[];
}
const rows: Row[] = [];
function save(extra: Record<string, unknown>): void {
  const run = {
    model,
    raw: values.raw,
    files: files.map((f) => relative(root, f)),
    half: values.half ?? 'all',
    limit: values.limit ? Number(values.limit) : null,
    date: new Date().toISOString(),
  };
  if (!values.out) {
    const { date: _, ...undated } = run; // the run's date is recordRun's
    recordRun('eval', { ...undated, ...extra, sets: rows });
    return;
  }
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify({ ...run, ...extra, sets: rows }, null, 1)}\n`);
}
for (const cap of caps) {
  const judge = judges[LONG[cap] ?? cap];
  if (!judge)
    throw new Error(
      `no judge for capability ${cap}; known: ${[...Object.keys(judges), ...Object.keys(LONG)].join(', ')}`,
    );
  const bySet = new Map<string, Row>();
  const cases = selected(all, cap);
  for (const [n, c] of cases.entries()) {
    process.stderr.write(`\r${cap}: ${n + 1}/${cases.length} `);
    const row = bySet.get(c.set!) ?? {
      set: c.set!,
      capability: cap,
      cases: 0,
      decisions: 0,
      correct: 0,
      accuracy: 0,
      p50Ms: 0,
      items: [],
    };
    bySet.set(c.set!, row);
    if (values.after && typeof c.req.text === 'string') await decideBefore(dm, c.cap, c.req.text);
    const started = performance.now();
    const out = await judge.call(dm, c.req);
    const ms = performance.now() - started;
    const decisions = judge.judge(
      out,
      c.expect,
      c.req,
      c.answer_any ?? (c.expect.answer_any as (string | null)[] | undefined),
    );
    row.items.push({ id: c.id, ms, decisions });
    if (permute > 0 && (cap === 'classify' || cap === 'classify-tree')) {
      row.flipRate = (row.flipRate ?? 0) + (await flips(dm, c, out, permute));
      row.permutedDecisions = (row.permutedDecisions ?? 0) + permute;
    }
  }
  for (const row of bySet.values()) {
    const decisions = row.items.flatMap((i) => i.decisions);
    row.cases = row.items.length;
    row.decisions = decisions.length;
    row.correct = decisions.filter((d) => d.ok).length;
    row.accuracy = row.decisions ? row.correct / row.decisions : 0;
    // Entities: decisions are expected pairs plus extra pairs found, so F1 = 2tp / (2tp + misses).
    if (cap === 'entities') row.f1 = (2 * row.correct) / Math.max(1, 2 * row.correct + row.decisions - row.correct);
    row.p50Ms = p50(row.items.map((i) => i.ms));
    const outcomes = decisions.flatMap((d) => (d.outcome ? [d.outcome] : []));
    if (outcomes.length) {
      row.ece = ece(outcomes);
      row.brier = brier(outcomes);
    }
    if (row.permutedDecisions) row.flipRate = row.flipRate! / row.permutedDecisions;
    rows.push(row);
  }
  save({ partial: true }); // a long run keeps what it has measured
}
await dm.close();

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
console.log(
  `model: ${model}${values.half ? `, ${values.half} half` : ''}${values.limit ? `, at most ${values.limit} per set` : ''}`,
);
console.log(
  '| set | capability | cases | decisions | accuracy | p50 ms | ECE | Brier | flip rate |\n|---|---|---|---|---|---|---|---|---|',
);
for (const r of rows) {
  const score = r.f1 !== undefined ? `F1 ${r.f1.toFixed(2)}` : pct(r.accuracy);
  const cal = r.ece !== undefined ? `${r.ece.toFixed(3)} | ${r.brier!.toFixed(3)}` : '- | -';
  console.log(
    `| ${r.set} | ${r.capability} | ${r.cases} | ${r.decisions} | ${score} | ${Math.round(r.p50Ms)} | ${cal} | ${r.flipRate !== undefined ? pct(r.flipRate) : '-'} |`,
  );
}
// Calibration per capability over every set run: what the reliability diagram draws.
const byCap = new Map<string, Outcome[]>();
for (const r of rows)
  byCap.set(r.capability, [
    ...(byCap.get(r.capability) ?? []),
    ...r.items.flatMap((i) => i.decisions.flatMap((d) => (d.outcome ? [d.outcome] : []))),
  ]);
const perCapability = Object.fromEntries(
  [...byCap].filter(([, o]) => o.length > 0).map(([cap, o]) => [cap, { n: o.length, ece: ece(o), brier: brier(o) }]),
);
console.log('\n| capability (all sets) | probabilities | ECE | Brier |\n|---|---|---|---|');
for (const [cap, c] of Object.entries(perCapability))
  console.log(`| ${cap} | ${c.n} | ${c.ece.toFixed(3)} | ${c.brier.toFixed(3)} |`);
for (const r of rows)
  for (const i of r.items)
    for (const d of i.decisions) if (!d.ok) console.log(`  miss ${i.id}: got ${d.got}, want ${d.want}`);

save({ calibration: perCapability });
if (values.svg) {
  const title = `Reliability, ${values.half ? `${values.half} half` : 'all items'}${values.limit ? `, at most ${values.limit} per set` : ''}`;
  writeFileSync(values.svg, reliabilitySvg(title, byCap));
}
