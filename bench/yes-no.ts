// yes-no benchmark: HTTP latency (p50/p95) on 300-character texts, the cost of extra statements,
// prefill tokens/s through the addon next to llama.cpp's own llama-bench on the same model file
// in the same run, and resident memory. Prints a table and writes its run into bench/results/yes-no.json.
//
//   node dist/bench/yes-no.js [--runs 30] [--model-path FILE]
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { resolveModel } from '../src/models/store.js';
import { percentile as pct } from '../src/bench/stats.js';
import { post, recordRun, ROOT as root, serveInProcess, update300 as text300 } from './harness.js';
import { scoreRound } from '../test/helpers/requests.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '30' }, 'model-path': { type: 'string' } },
});
const runs = Number(values.runs);

const config = loadConfig(process.env, {
  port: 0,
  logLevel: 'silent',
  ...(values['model-path'] ? { modelPath: values['model-path'] } : {}),
});
const modelPath = await resolveModel(config.model, { path: config.modelPath });
const server = await serveInProcess({ ...config, modelPath });
const { service } = server;
const url = `${server.url}/v1/decision-machine-1/yes-no`;

// 300-character texts that differ from run to run (update300), so nothing but the instructions is cached.
const call = (body: unknown) => post(url, body);

await call({ text: text300(999), statement: 'warm-up' }); // both slots load the instructions once
await call({ text: text300(998), statement: 'warm-up' });

const single: number[] = [];
const four: number[] = [];
for (let i = 0; i < runs; i++) {
  single.push((await call({ text: text300(i), statement: 'The client must act before Friday.' })).ms);
  four.push(
    (
      await call({
        text: text300(i + runs),
        statements: [
          'The client must act before Friday.',
          'Finance has work to do.',
          'There are open questions.',
          'The review is finished.',
        ],
      })
    ).ms,
  );
}

// Prefill rate through the addon: a fresh 512-token prefix, one decode, like llama-bench's pp512.
const engine = service.engine;
const prefill: number[] = [];
for (let i = 0; i < 5; i++) {
  const prefix = engine.tokenize(`${i} ${text300(i).repeat(8)}`.repeat(2)).slice(0, 511);
  const job = { prefix, branches: [engine.tokenize('?')], options: [engine.tokenize('Yes')] };
  const [r] = await scoreRound(engine, [job]);
  prefill.push(r!.promptTokens / (r!.decodeMs / 1000));
}
const rssMb = process.memoryUsage().rss / 2 ** 20;
await server.close();

// The baseline: llama.cpp's llama-bench, built from the same sources, same file, same threads.
const benchBin = `${root}build/llama-bench/llama-bench`;
if (!existsSync(benchBin))
  execFileSync('npx', ['cmake-js', 'compile', '--out', 'build', '--target', 'llama-bench'], {
    cwd: root,
    stdio: 'inherit',
  });
const baseline = JSON.parse(
  execFileSync(
    benchBin,
    ['-m', modelPath, '-t', String(config.threads), '-p', '512', '-n', '0', '-r', '3', '-o', 'json'],
    { encoding: 'utf8' },
  ),
) as { avg_ts: number }[];
const llamaBenchPrefill = baseline[0]!.avg_ts;

const modelMb = statSync(modelPath).size / 2 ** 20;
const addonPrefill = pct(prefill, 50);
const report = {
  model: engine.info.description,
  modelPath,
  slots: config.slots,
  threads: config.threads,
  runs,
  yesNo300: { p50Ms: pct(single, 50), p95Ms: pct(single, 95) },
  fourStatements: { p50Ms: pct(four, 50), ratioToOne: pct(four, 50) / pct(single, 50) },
  prefillTokensPerSecond: {
    addon: addonPrefill,
    llamaBench: llamaBenchPrefill,
    ratio: addonPrefill / llamaBenchPrefill,
  },
  memory: { rssMb, modelMb, overModelMb: rssMb - modelMb },
};
const row = (k: string, v: string) => console.log(`| ${k} | ${v} |`);
console.log(
  `| yes-no benchmark (${report.model}, ${runs} runs, ${config.slots} slots x ${config.threads} threads) | |\n|---|---|`,
);
row(
  'p50 / p95, one statement, 300 chars',
  `${report.yesNo300.p50Ms.toFixed(0)} / ${report.yesNo300.p95Ms.toFixed(0)} ms`,
);
row(
  'p50, four statements',
  `${report.fourStatements.p50Ms.toFixed(0)} ms (${report.fourStatements.ratioToOne.toFixed(2)}x one)`,
);
row(
  'prefill tok/s: addon / llama-bench pp512',
  `${addonPrefill.toFixed(1)} / ${llamaBenchPrefill.toFixed(1)} (${(report.prefillTokensPerSecond.ratio * 100).toFixed(0)}%)`,
);
row(
  'RSS / model file',
  `${rssMb.toFixed(0)} MB / ${modelMb.toFixed(0)} MB (+${report.memory.overModelMb.toFixed(0)} MB)`,
);
recordRun('yes-no', report);
