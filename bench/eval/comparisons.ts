// Comparing questions ("Is the order worth more than $500?") read two ways on the default model:
// `direct` (yes-no's reading of the question alone) and `computed` (the number the model says the
// question is about, compared: src/decisions/comparison.ts, with yes-no's reading for the share of
// "no such number"). Items: the development sets' yes-no statements and JevBench's noul questions
// (jevbench-240's base cases against its gold) that comparisonIn reads as one comparison. Prints
// accuracy per source and reading; writes the run into bench/results/comparisons.json.
//
//   node dist/bench/eval/comparisons.js [--per-domain 20] [--gold FILE]
import { parseArgs } from 'node:util';
import { DEFAULTS, loadConfig } from '../../src/config.js';
import { Comparisons, comparisonIn } from '../../src/decisions/comparison.js';
import { Reading } from '../../src/decisions/reading.js';
import { YesNo } from '../../src/decisions/yes-no.js';
import { Engine } from '../../src/engine/engine.js';
import { resolveModel, storeOptions } from '../../src/models/store.js';
import { scoreRound } from '../../test/helpers/requests.js';
import { devCases } from './dev-cases.js';
import { goldQuestions } from './jevbench-cases.js';
import { recordRun } from '../harness.js';

const { values } = parseArgs({
  options: { 'per-domain': { type: 'string', default: '20' }, gold: { type: 'string' } },
});

/** One text and its comparing questions, each with its gold answer. */
interface Group {
  source: string;
  text: string;
  questions: { id: string; question: string; gold: boolean }[];
}

function development(): Group[] {
  return devCases<{ text?: string; statement?: string }, { answer?: boolean }>('yes-no').flatMap((c) =>
    c.req.text !== undefined &&
    c.req.statement !== undefined &&
    typeof c.expect.answer === 'boolean' &&
    comparisonIn(c.req.statement)
      ? [
          {
            source: `dev:${c.set.split(':')[0]}`,
            text: c.req.text,
            questions: [{ id: c.id, question: c.req.statement, gold: c.expect.answer }],
          },
        ]
      : [],
  );
}

function jevbench(perDomain: number): Group[] {
  const byText = new Map<string, Group>();
  for (const q of goldQuestions('noul', perDomain, values.gold)) {
    if (typeof q.gold !== 'boolean' || !q.question || !comparisonIn(q.question)) continue;
    const g = byText.get(q.text) ?? { source: 'jevbench', text: q.text, questions: [] };
    g.questions.push({ id: q.id, question: q.question, gold: q.gold });
    byText.set(q.text, g);
  }
  return [...byText.values()];
}

const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
const modelPath = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
const engine = await Engine.open({ ...config, modelPath, encoderPath: undefined });
const reading = new Reading(engine);
const yesNo = new YesNo(engine);
const comparisons = new Comparisons(reading.prompt);

const groups = [...development(), ...jevbench(Number(values['per-domain']))];
const rows: { id: string; source: string; question: string; gold: boolean; direct: number; computed: number }[] = [];
const started = Date.now();
for (const g of groups) {
  const excerpt = reading.reader.sample(g.text);
  const prefix = reading.prefix(g.text, excerpt);
  const questions = g.questions.map((q) => q.question);
  const [direct] = await scoreRound(engine, [
    { prefix, branches: questions.map((q) => yesNo.branch(q)), options: yesNo.options },
  ]);
  const n = yesNo.options.length;
  const p = new Map(questions.map((q, b) => [q, yesNo.probability(direct!.logprobs.subarray(b * n, (b + 1) * n))]));
  const planned = comparisons.job(prefix, excerpt.text, questions);
  const computed = planned
    ? comparisons.probabilities(planned, (await scoreRound(engine, [planned.job]))[0]!, (q) => p.get(q)!)
    : p;
  for (const q of g.questions) {
    rows.push({ ...q, source: g.source, direct: p.get(q.question)!, computed: computed.get(q.question)! });
  }
  process.stderr.write(`\r${rows.length} questions`);
}
process.stderr.write('\n');

const sources = [...new Set(rows.map((r) => r.source))];
const accuracy = (rs: typeof rows, k: 'direct' | 'computed') =>
  rs.filter((r) => r[k] >= 0.5 === r.gold).length / Math.max(1, rs.length);
const table = sources.map((source) => {
  const rs = rows.filter((r) => r.source === source);
  return { source, questions: rs.length, direct: accuracy(rs, 'direct'), computed: accuracy(rs, 'computed') };
});
console.log('| source | questions | direct | computed |\n|---|---|---|---|');
for (const t of table) {
  console.log(`| ${t.source} | ${t.questions} | ${(100 * t.direct).toFixed(1)}% | ${(100 * t.computed).toFixed(1)}% |`);
}
recordRun('comparisons', {
  command: `node dist/bench/eval/comparisons.js --per-domain ${values['per-domain']}`,
  seconds: (Date.now() - started) / 1000,
  table,
  rows,
});
await engine.close();
