// Accuracy on the labelled decisions: the shared development set (../shared/eval) plus our own
// cases (bench/eval/extra-decisions.jsonl). Prints a table and writes JSON.
//
//   node dist/bench/eval.js [--model ID] [--cap yes-no] [--out bench/results/eval.json]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { open, type YesNoInput, type YesNoResult } from '../src/index.js';

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
    cap: { type: 'string', default: 'yes-no' },
    out: { type: 'string', default: `${root}bench/results/eval.json` },
  },
});

const dm = await open({
  ...(values.model ? { model: values.model } : {}),
  ...(values['model-path'] ? { modelPath: values['model-path'] } : {}),
  logLevel: 'silent',
});
const cases = readCases().filter((c) => c.cap === values.cap);
let right = 0;
let total = 0;
const misses: { id: string; statement: string; expected: boolean; probability: number }[] = [];
const started = performance.now();
for (const c of cases) {
  const out = await dm.yesNo(c.req as YesNoInput);
  const results: YesNoResult[] = 'results' in out ? (out.results as YesNoResult[]) : [out];
  const expected = (c.expect.answers as boolean[] | undefined) ?? [c.expect.answer as boolean];
  results.forEach((r, i) => {
    total++;
    if (r.answer === expected[i]) right++;
    else misses.push({ id: c.id, statement: r.statement, expected: expected[i]!, probability: r.probability });
  });
}
const seconds = (performance.now() - started) / 1000;
await dm.close();

const report = {
  capability: values.cap,
  model: values['model-path'] ?? values.model ?? 'default',
  cases: cases.length,
  decisions: total,
  correct: right,
  accuracy: total ? right / total : 0,
  seconds,
  misses,
};
console.log(`| capability | model | cases | decisions | accuracy |\n|---|---|---|---|---|`);
console.log(`| ${report.capability} | ${report.model} | ${report.cases} | ${total} | ${(report.accuracy * 100).toFixed(1)}% |`);
for (const m of misses) console.log(`  miss ${m.id}: "${m.statement}" expected ${m.expected}, p=${m.probability.toFixed(3)}`);
mkdirSync(dirname(values.out!), { recursive: true });
writeFileSync(values.out!, `${JSON.stringify(report, null, 2)}\n`);
