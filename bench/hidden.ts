// What asking for hidden states (ScoreJob.hidden) costs: the same yes-no score jobs side by side
// with and without, time on the slot (decodeMs) p50. Two cases: a fresh 300-character text (the
// prefix is prefilled) and the same text again (only the branches are decoded: where the extra
// pause of the graph at the output norm weighs most). Each run times both side by side, so the
// median of the runs' ratios (with / without) holds up on a machine shared with other work better
// than the ratio of the p50s. Writes bench/results/hidden.json.
//
//   node dist/bench/hidden.js [--runs 30] [--threads N] [--model-path FILE]
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { Engine } from '../src/engine/engine.js';
import { resolveModel } from '../src/models/store.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: { runs: { type: 'string', default: '30' }, threads: { type: 'string' }, 'model-path': { type: 'string' } },
});
const runs = Number(values.runs);
const config = loadConfig(process.env, values['model-path'] ? { modelPath: values['model-path'] } : {});
const modelPath = await resolveModel(config.model, { path: config.modelPath });
// One slot: every job runs alone, so its decodeMs is its own.
const { contextSize, batchSize, promptCacheMiB } = config;
const threads = Number(values.threads ?? config.threads);
const engine = await Engine.open({ modelPath, slots: 1, threads, queue: 2, contextSize, batchSize, promptCacheMiB });

function text300(i: number): string {
  const base = `Update ${i}: the order for client ${1000 + i} was reviewed on day ${(i % 28) + 1}. The team confirmed the order details, noted two open questions about dates and amounts, and agreed to send a summary to the client before Friday. No further action is needed from finance at this point. `;
  return base.slice(0, 300);
}
const STATEMENTS = [
  ' The client must act before Friday.',
  ' Finance has work to do.',
  ' There are open questions.',
  ' The review is finished.',
];
const options = [engine.tokenize(' Yes'), engine.tokenize(' No')];
const prefixOf = (i: number) =>
  engine.tokenize(
    `Decide whether the statement holds for the text. Answer Yes or No.\nText: ${text300(i)}\nStatement:`,
  );

async function decodeMs(prefix: Int32Array, branches: number, hidden: boolean): Promise<number> {
  const job = { prefix, branches: STATEMENTS.slice(0, branches).map((s) => engine.tokenize(s)), options, hidden };
  return (await engine.score([job]))[0]!.decodeMs;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pairedRatio = ({ off, on }: { off: number[]; on: number[] }) => p50(on.map((ms, i) => ms / off[i]!));
const cases: Record<string, { off: number[]; on: number[] }> = {};
const record = (name: string, hidden: boolean, ms: number) =>
  (cases[name] ??= { off: [], on: [] })[hidden ? 'on' : 'off'].push(ms);

await decodeMs(prefixOf(-1), 4, true); // warm-up
for (let i = 0; i < runs; i++) {
  for (const branches of [1, 4]) {
    // Alternate which goes first, so neither always follows the other; each has a text of its own.
    for (const hidden of i % 2 ? [true, false] : [false, true]) {
      const prefix = prefixOf(2 * (i * 8 + branches) + (hidden ? 1 : 0));
      record(`fresh text, ${branches} statement(s)`, hidden, await decodeMs(prefix, branches, hidden));
      record(`cached text, ${branches} statement(s)`, hidden, await decodeMs(prefix, branches, hidden));
    }
  }
}
await engine.close();

const report = {
  model: engine.info.description,
  threads: threads,
  runs,
  hiddenSize: engine.hiddenSize,
  cases: Object.fromEntries(
    Object.entries(cases).map(([name, c]) => [
      name,
      { offP50Ms: p50(c.off), onP50Ms: p50(c.on), ratioOfP50s: p50(c.on) / p50(c.off), medianRatio: pairedRatio(c) },
    ]),
  ),
};
console.log(
  `| hidden states (${report.model}, ${runs} runs, 1 slot x ${threads} threads) | without p50 | with p50 | median ratio |`,
);
console.log('|---|---|---|---|');
for (const [name, c] of Object.entries(report.cases))
  console.log(`| ${name} | ${c.offP50Ms.toFixed(1)} ms | ${c.onP50Ms.toFixed(1)} ms | ${c.medianRatio.toFixed(3)} |`);
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/hidden.json`, `${JSON.stringify(report, null, 2)}\n`);
