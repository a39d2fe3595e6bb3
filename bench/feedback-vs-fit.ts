// A deployment's labels taught online against `decision-machine fit` on the same examples: 16 of
// HWU64's 64 intents (every fourth of its label list; the training archives, test/helpers/training-data.ts),
// 8 texts per intent from a seeded shuffle of its train split, streamed one correction at a time
// through POST .../feedback (each a classify decision the service made, corrected by its
// x-decision-id, sent once the one before is read) until the head is refitted online; the same
// examples, as fit lines in the same order, then fitted by fitHeads (what `decision-machine fit
// FILE` runs) into a store of their own. On 5 test texts per intent: the online head as requests
// meet it (over HTTP), the offline head on the same texts' readings, and the zero-shot route
// (asked before any correction).
//   node dist/bench/feedback-vs-fit.js [--per-label 8] [--test 5] [--seed 1]
// Writes bench/results/feedback-vs-fit.json.
import { parseArgs } from 'node:util';
import { argmax } from '../src/decisions/distribution.js';
import { fitHeads, parseExamples } from '../src/heads/fit.js';
import { decodeParams, type HeadMeta } from '../src/heads/heads.js';
import { headScores } from '../src/heads/logistic.js';
import { shuffleInPlace, uniform } from '../src/heads/random.js';
import { HeadReader } from '../src/heads/reading.js';
import { classifySignature } from '../src/heads/signature.js';
import { openStore, type Store } from '../src/store/store.js';
import { recordRun } from './harness.js';
import { startLearningService } from './learning-service.js';
import { boltLab, type LabelledText } from '../test/helpers/training-data.js';

const { values } = parseArgs({
  options: {
    'per-label': { type: 'string', default: '8' },
    test: { type: 'string', default: '5' },
    seed: { type: 'string', default: '1' },
  },
});
const perLabel = Number(values['per-label']);
const seed = Number(values.seed);

const hwu = await boltLab('hwu');
const labels = hwu.labels.filter((_, i) => i % 4 === 0);
/** `n` texts per label of `split`, from a seeded shuffle, dealt round the labels. */
const sample = (split: LabelledText[], n: number): LabelledText[] => {
  const random = uniform(seed);
  const per = labels.map((l) =>
    shuffleInPlace(
      split.filter((x) => x.label === l),
      random,
    ).slice(0, n),
  );
  return [...Array(n).keys()].flatMap((k) => per.flatMap((texts) => (texts[k] ? [texts[k]] : [])));
};
const train = sample(hwu.train, perLabel);
const test = sample(hwu.test, Number(values.test));

const { post, service, feedback, store, model, close } = await startLearningService();
const classify = (text: string) => post('/decision-machine-1/classify', { text, labels });

const zeroShot = [];
for (const x of test) zeroShot.push((await classify(x.text)).json.label === x.label);

const started = performance.now();
for (const x of train) {
  const decided = await classify(x.text);
  const res = await post('/decision-machine-1/feedback', { id: decided.id, expect: { label: x.label } });
  if (res.status !== 202) throw new Error(`feedback: ${res.status} ${JSON.stringify(res.json)}`);
  await feedback.refits.settled();
}
const taughtSeconds = (performance.now() - started) / 1000;
const online = [];
const decidedByHead = [];
for (const x of test) {
  const r = await classify(x.text);
  online.push(r.json.label === x.label);
  decidedByHead.push(r.head !== null);
}

// The same examples through `fit`'s path, into a store of its own.
const lines = train.map((x) =>
  JSON.stringify({ cap: 'classify', req: { text: x.text, labels }, expect: { label: x.label } }),
);
const offlineStore = await openStore(':memory:');
const sha = await model();
const [report] = await fitHeads(service.engine, parseExamples(lines.join('\n')), { store: offlineStore, model: sha });
const sig = classifySignature(labels.map((name) => ({ name })));
const params = async (s: Store) => {
  const head = (await s.listHeads()).find((h) => h.signature === sig.key);
  if (!head) return undefined;
  const meta = JSON.parse(head.meta) as HeadMeta;
  return decodeParams((await s.findHead(head.id))!.weights, meta.outcomes.length, meta.dim);
};
const [onlineParams, offlineParams] = [await params(store), await params(offlineStore)];
const session = service.engine.admit();
const { readings } = await new HeadReader(service.engine)
  .read(
    sig,
    test.map((x) => x.text),
    session,
  )
  .finally(() => session.close());
const offline = offlineParams
  ? readings.map((r, i) => sig.outcomes[argmax(headScores(offlineParams, r.hidden, r.base))] === test[i]!.label)
  : zeroShot;
const weightsDiffer =
  onlineParams && offlineParams
    ? Math.max(...onlineParams.weights.map((w, i) => Math.abs(w - offlineParams.weights[i]!)))
    : null;

const accuracy = (xs: boolean[]) => Number((xs.filter(Boolean).length / xs.length).toFixed(4));
const result = {
  set: `hwu: ${labels.length} of its 64 intents`,
  provenance: hwu.provenance,
  seed,
  corrections: train.length,
  testTexts: test.length,
  taughtSeconds: Number(taughtSeconds.toFixed(1)),
  accuracy: {
    zeroShotRoute: accuracy(zeroShot),
    onlineHead: accuracy(online),
    fit: accuracy(offline),
  },
  decidedByOnlineHead: decidedByHead.filter(Boolean).length,
  fitReport: report && {
    stored: report.stored,
    zeroShot: report.zeroShot,
    fitted: report.fitted,
    route: report.route,
    routeExamples: report.routeExamples,
  },
  maxWeightDifference: weightsDiffer,
};
console.log(JSON.stringify(result, null, 2));
recordRun('feedback-vs-fit', result);
await offlineStore.close();
await close();
