// Accuracy on the labelled decisions: the shared development set (../shared/eval) plus our own
// cases (bench/eval/extra-decisions.jsonl). Prints a table and writes JSON.
//
//   node dist/bench/eval.js [--model ID | --model-path FILE] [--cap all|yes-no,classify,...,answer-20k,yes-no-20k] [--out FILE]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { open, type AnswerInput, type ClassifyInput, type ClassifyTreeInput, type DecisionMachine, type EntitiesInput } from '../src/index.js';
import type { RateInput, VerifyInput, YesNoInput, YesNoResult, AnswerResult, Entity, ExtractInput } from '../src/index.js';

interface Case {
  id: string;
  cap: string;
  req: Record<string, unknown>;
  expect: Record<string, unknown>;
}

const root = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = [`${root}../shared/eval/dev-decisions.jsonl`, `${root}bench/eval/extra-decisions.jsonl`];

function readCases(): Case[] {
  return SOURCES.filter(existsSync).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Case),
  );
}

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    'model-path': { type: 'string' },
    cap: { type: 'string', default: 'all' },
    out: { type: 'string', default: `${root}bench/results/eval.json` },
  },
});

/** How each capability is called and judged; `decisions` are the individual answers compared. */
interface Judge {
  call(dm: DecisionMachine, req: Record<string, unknown>): Promise<unknown>;
  judge(out: any, expect: Record<string, any>): { got: string; want: string; ok: boolean }[];
}

const JUDGES: Record<string, Judge> = {
  'yes-no': {
    call: (dm, req) => dm.yesNo(req as unknown as YesNoInput),
    judge: (out, expect) => {
      const results: YesNoResult[] = 'results' in out ? out.results : [out];
      const want: boolean[] = expect.answers ?? [expect.answer];
      return results.map((r, i) => ({ got: `${r.answer} (p=${r.probability.toFixed(3)}) "${r.statement}"`, want: String(want[i]), ok: r.answer === want[i] }));
    },
  },
  classify: {
    call: (dm, req) => dm.classify(req as unknown as ClassifyInput),
    judge: (out, expect) => [{ got: `${out.label} (p=${out.probability.toFixed(3)})`, want: expect.label, ok: out.label === expect.label }],
  },
  'classify-tree': {
    call: (dm, req) => dm.classifyTree(req as unknown as ClassifyTreeInput),
    judge: (out, expect) => [{ got: out.path.join(' > '), want: expect.path.join(' > '), ok: out.path.join('\u0000') === expect.path.join('\u0000') }],
  },
  rate: {
    call: (dm, req) => dm.rate(req as unknown as RateInput),
    judge: (out, expect) => [{ got: `${out.level} (score ${out.score.toFixed(2)})`, want: `${expect.level}±${expect.tol ?? 1}`, ok: Math.abs(out.level - expect.level) <= (expect.tol ?? 1) }],
  },
  answer: {
    call: (dm, req) => dm.answer(req as unknown as AnswerInput),
    judge: (out, expect) => {
      const results: AnswerResult[] = 'results' in out ? out.results : [out];
      const want: (string | null)[] = expect.answers ?? [expect.answer];
      return results.map((r, i) => ({ got: JSON.stringify(r.answer), want: JSON.stringify(want[i]), ok: r.answer === want[i] }));
    },
  },
  entities: {
    // F1 over (type, text) pairs: each expected pair is one decision, and each extra pair found is a miss too.
    call: (dm, req) => dm.entities(req as unknown as EntitiesInput),
    judge: (out, expect) => {
      const got = new Set<string>(out.entities.map((e: Entity) => `${e.type}: ${e.text}`));
      const want = new Set<string>(expect.entities.map((e: Entity) => `${e.type}: ${e.text}`));
      return [
        ...[...want].map((w) => ({ got: got.has(w) ? w : '(missing)', want: w, ok: got.has(w) })),
        ...[...got].filter((g) => !want.has(g)).map((g) => ({ got: g, want: '(nothing)', ok: false })),
      ];
    },
  },
  extract: {
    // Field accuracy: every expected leaf value is one decision (missing fields expect null).
    call: (dm, req) => dm.extract(req as unknown as ExtractInput),
    judge: (out, expect) => {
      const leaves = (o: any, prefix = ''): [string, unknown][] =>
        Object.entries(o ?? {}).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? leaves(v, `${prefix}${k}.`) : [[`${prefix}${k}`, v] as [string, unknown]]));
      const got = Object.fromEntries(leaves(out.data));
      return leaves(expect.data).map(([k, want]) => ({ got: `${k}=${JSON.stringify(got[k])}`, want: JSON.stringify(want), ok: JSON.stringify(got[k]) === JSON.stringify(want) }));
    },
  },
  verify: {
    call: (dm, req) => dm.verify(req as unknown as VerifyInput),
    judge: (out, expect) => [{ got: `${out.matches} (p=${out.probability.toFixed(3)}, found ${JSON.stringify(out.found)})`, want: String(expect.matches), ok: out.matches === expect.matches }],
  },
};

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

const dm = await open({
  ...(values.model ? { model: values.model } : {}),
  ...(values['model-path'] ? { modelPath: values['model-path'] } : {}),
  logLevel: 'silent',
});
const caps = values.cap === 'all' ? [...Object.keys(JUDGES), ...Object.keys(LONG)] : values.cap!.split(',');
const all = readCases();
const report = [];
for (const cap of caps) {
  const base = LONG[cap] ?? cap;
  const judge = JUDGES[base];
  if (!judge) throw new Error(`no judge for capability ${cap}; known: ${[...Object.keys(JUDGES), ...Object.keys(LONG)].join(', ')}`);
  const cases = all
    .filter((c) => c.cap === base && (!LONG[cap] || typeof c.req.text === 'string'))
    .map((c) => (LONG[cap] ? { ...c, req: { ...c.req, text: inHaystack(String(c.req.text)) } } : c));
  const misses: { id: string; got: string; want: string }[] = [];
  let total = 0;
  const started = performance.now();
  for (const c of cases) {
    for (const d of judge.judge(await judge.call(dm, c.req), c.expect)) {
      total++;
      if (!d.ok) misses.push({ id: c.id, got: d.got, want: d.want });
    }
  }
  // For entities, decisions are expected pairs plus extra pairs found: report F1 over them.
  const fp = misses.filter((m) => m.want === '(nothing)').length;
  const tp = total - misses.length;
  const f1 = (2 * tp) / Math.max(1, 2 * tp + misses.length);
  report.push({ capability: cap, cases: cases.length, decisions: total, correct: tp, accuracy: total ? tp / total : 0, ...(cap === 'entities' ? { f1, falsePositives: fp } : {}), seconds: (performance.now() - started) / 1000, misses });
}
await dm.close();

const model = values['model-path'] ?? values.model ?? 'default model';
console.log(`| capability (${model}) | cases | decisions | accuracy |\n|---|---|---|---|`);
for (const r of report) console.log(`| ${r.capability} | ${r.cases} | ${r.decisions} | ${'f1' in r ? `F1 ${r.f1!.toFixed(2)}` : `${(r.accuracy * 100).toFixed(1)}%`} |`);
for (const r of report) for (const m of r.misses) console.log(`  miss ${m.id}: got ${m.got}, want ${m.want}`);
mkdirSync(dirname(values.out!), { recursive: true });
writeFileSync(values.out!, `${JSON.stringify({ model, capabilities: report }, null, 2)}\n`);
