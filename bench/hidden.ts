// What asking for hidden states (ScoreJob.hidden) costs: the same yes-no score jobs side by side
// without, with (the final state) and with three layers (hiddenLayers: a quarter, half way, the
// last: the graph pauses three times), time on the slot (decodeMs) p50. Two cases: a fresh 300-character text (the
// prefix is prefilled) and the same text again (only the branches are decoded: where the extra
// pause of the graph at the output norm weighs most). With --before, also on another build of the
// addon (one from before hidden states, whose contexts have no eval callback), loaded in the same
// process: what a job that does not ask pays for the feature. Each run times every variant side by
// side, so the median of the runs' ratios holds up on a machine shared with other work better than
// the ratio of the p50s. Writes its run into bench/results/hidden.json.
//
//   node dist/bench/hidden.js [--runs 30] [--threads N] [--before ADDON.node] [--model-path FILE]
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { loadBinding, type NativeBinding, type NativeEngine, type ScoreResult } from '../src/binding.js';
import { loadConfig } from '../src/config.js';
import { resolveModel } from '../src/models/store.js';
import { percentile } from '../src/bench/stats.js';
import { recordRun, update300 } from './harness.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    threads: { type: 'string' },
    before: { type: 'string' },
    'model-path': { type: 'string' },
  },
});
const runs = Number(values.runs);
const config = loadConfig(process.env, values['model-path'] ? { modelPath: values['model-path'] } : {});
const modelPath = await resolveModel(config.model, { path: config.modelPath });
const threads = Number(values.threads ?? config.threads);

// One slot per engine: every job runs alone, so its decodeMs is its own.
async function openEngine(binding: NativeBinding): Promise<NativeEngine> {
  const native = new binding.Engine();
  const { contextSize, batchSize, promptCacheMiB } = config;
  await native.load({
    modelPath,
    slots: 1,
    threads,
    contextSize,
    batchSize,
    sequences: 33,
    promptCacheMiB,
    borrowTexts: false,
  });
  return native;
}
const engine = await openEngine(loadBinding());
const before = values.before
  ? await openEngine(createRequire(import.meta.url)(values.before) as NativeBinding)
  : undefined;

const tokenize = (text: string) => engine.tokenize(text, false, false);
const STATEMENTS = [
  ' The client must act before Friday.',
  ' Finance has work to do.',
  ' There are open questions.',
  ' The review is finished.',
];
const options = [tokenize(' Yes'), tokenize(' No')];
const prefixOf = (i: number) =>
  tokenize(`Decide whether the statement holds for the text. Answer Yes or No.\nText: ${update300(i)}\nStatement:`);

type Variant = 'before' | 'without' | 'with' | 'layers';
const variants: Variant[] = before ? ['before', 'without', 'with', 'layers'] : ['without', 'with', 'layers'];
const layerCount = engine.layerCount();
const LAYERS = [Math.floor(layerCount / 4), Math.floor(layerCount / 2), layerCount - 1];
async function decodeMs(variant: Variant, prefix: Int32Array, branches: number): Promise<number> {
  const job = {
    kind: 'score' as const,
    prefix,
    branches: STATEMENTS.slice(0, branches).map(tokenize),
    options,
    ...(variant === 'with' ? { hidden: true } : {}),
    ...(variant === 'layers' ? { hidden: true, hiddenLayers: LAYERS } : {}),
  };
  const native = variant === 'before' ? before! : engine;
  return ((await native.submit(job).result) as ScoreResult).decodeMs;
}

const p50 = (xs: number[]) => percentile(xs, 50);
const cases: Record<string, Record<Variant, number[]>> = {};
const record = (name: string, variant: Variant, ms: number) =>
  (cases[name] ??= { before: [], without: [], with: [], layers: [] })[variant].push(ms);

for (const v of variants) await decodeMs(v, prefixOf(-1), 4); // warm-up
let texts = 0;
for (let i = 0; i < runs; i++) {
  for (const branches of [1, 4]) {
    // The order turns from run to run, so no variant always follows another; each has a text of its own.
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(i + k) % variants.length]!;
      const prefix = prefixOf(texts++);
      record(`fresh text, ${branches} statement(s)`, variant, await decodeMs(variant, prefix, branches));
      record(`cached text, ${branches} statement(s)`, variant, await decodeMs(variant, prefix, branches));
    }
  }
}
const hiddenSize = engine.hiddenSize();
const model = engine.info().description;
engine.close();
before?.close();

const ratio = (a: number[], b: number[]) => p50(a.map((ms, i) => ms / b[i]!));
const report = {
  model,
  threads,
  runs,
  hiddenSize,
  layers: LAYERS,
  before: values.before ?? null,
  cases: Object.fromEntries(
    Object.entries(cases).map(([name, c]) => [
      name,
      {
        withoutP50Ms: p50(c.without),
        withP50Ms: p50(c.with),
        withOverWithout: ratio(c.with, c.without),
        layersP50Ms: p50(c.layers),
        layersOverWithout: ratio(c.layers, c.without),
        ...(before ? { beforeP50Ms: p50(c.before), withoutOverBefore: ratio(c.without, c.before) } : {}),
      },
    ]),
  ),
};
console.log(
  `| ${model}, ${runs} runs, 1 slot x ${threads} threads, p50 ms (median ratio) |${before ? ' before |' : ''} without | with | layers ${LAYERS.join(', ')} |`,
);
console.log(`|---|${before ? '---|' : ''}---|---|---|`);
for (const [name, c] of Object.entries(report.cases)) {
  const b = before ? ` ${c.beforeP50Ms!.toFixed(1)} |` : '';
  const without = `${c.withoutP50Ms.toFixed(1)}${before ? ` (${c.withoutOverBefore!.toFixed(3)}x before)` : ''}`;
  const withs = `${c.withP50Ms.toFixed(1)} (${c.withOverWithout.toFixed(3)}x without)`;
  const layers = `${c.layersP50Ms.toFixed(1)} (${c.layersOverWithout.toFixed(3)}x without)`;
  console.log(`| ${name} |${b} ${without} | ${withs} | ${layers} |`);
}
recordRun('hidden', report);
