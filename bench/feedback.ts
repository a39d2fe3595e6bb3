// Online refits beside live requests, on the default model and settings: a label set of 16 opaque
// codes (L01..L16, one per topic, so the model cannot read them by name) is taught through
// POST .../feedback, 8 corrections per label of decisions the service made (classify, then the
// correction of its x-decision-id), one at a time, each once the one before is read. The 128th
// completes 8 per label: from it on, a client sends yes-no requests one after another while the
// service reads that correction and refits the decision's head off the request path. Measures:
// yes-no p50 idle and while the refit runs; the seconds per correction on the idle service
// (decision, correction, reading); the seconds from the 128th correction to the head deciding
// requests; the head's accuracy on 2 held-out texts per label against the zero-shot route's.
// Writes bench/results/feedback.json.
//   node dist/bench/feedback.js [--idle N]
import { parseArgs } from 'node:util';
import { percentile } from '../src/bench/stats.js';
import { recordRun, update300 } from './harness.js';
import { startLearningService } from './learning-service.js';

const TOPICS: [string, string[]][] = [
  ['weather', ['rain', 'forecast', 'storm clouds', 'humidity', 'a cold front']],
  ['football', ['the striker', 'a penalty kick', 'the league table', 'the goalkeeper', 'extra time']],
  ['cooking', ['the oven', 'a pinch of salt', 'the simmering sauce', 'fresh basil', 'the recipe']],
  ['banking', ['the mortgage rate', 'a savings account', 'the overdraft', 'wire transfers', 'the branch manager']],
  ['medicine', ['the patient', 'a blood test', 'the prescription', 'the ward nurse', 'a fever']],
  ['travel', ['the boarding gate', 'a hotel booking', 'the passport check', 'jet lag', 'the return flight']],
  ['music', ['the violin', 'a concert hall', 'the chorus', 'the drummer', 'a new album']],
  ['programming', ['the compiler', 'a null pointer', 'the pull request', 'unit tests', 'the database index']],
  ['gardening', ['the tomato plants', 'compost', 'the hedge trimmer', 'weeds', 'the flower beds']],
  ['law', ['the judge', 'a witness statement', 'the appeal court', 'the contract clause', 'the defence lawyer']],
  ['cars', ['the gearbox', 'a flat tyre', 'the engine oil', 'the brake pads', 'the dashboard light']],
  ['astronomy', ['the telescope', 'a distant galaxy', 'the lunar eclipse', 'Saturn rings', 'a meteor shower']],
  ['fashion', ['the runway', 'a silk dress', 'the autumn collection', 'leather boots', 'the designer']],
  ['school', ['the headteacher', 'a maths exam', 'the homework', 'the playground', 'the school bus']],
  ['housing', ['the landlord', 'a two-bedroom flat', 'the rent increase', 'the estate agent', 'the deposit']],
  ['pets', ['the puppy', 'a cat flap', 'the vet visit', 'dog food', 'the hamster cage']],
];
const FRAMES = [
  (a: string, b: string) => `Yesterday we talked for an hour about ${a} and ${b}.`,
  (a: string, b: string) => `My neighbour keeps complaining about ${a}, and now ${b} as well.`,
  (a: string, b: string) => `The article on ${a} also mentioned ${b}.`,
  (a: string, b: string) => `I need advice on ${a}; ${b} is the other worry.`,
  (a: string, b: string) => `Nobody expected ${a} to matter, but ${b} changed that.`,
  (a: string, b: string) => `Our meeting covered ${a} first and ${b} after lunch.`,
  (a: string, b: string) => `She wrote a long email about ${a} and ${b}.`,
  (a: string, b: string) => `The podcast this week is about ${a}, with a word on ${b}.`,
  (a: string, b: string) => `I read that ${a} is getting worse because of ${b}.`,
  (a: string, b: string) => `Can someone explain ${a} to me, and ${b} too?`,
];
const LABELS = TOPICS.map((_, i) => `L${String(i + 1).padStart(2, '0')}`);
const text = (topic: number, k: number) => {
  const words = TOPICS[topic]![1];
  return FRAMES[k]!(words[k % words.length]!, words[(k + 2) % words.length]!);
};

const { values } = parseArgs({ options: { idle: { type: 'string', default: '40' } } });
const { url, post, service, feedback, config, close } = await startLearningService();
let n = 0;
const yesNo = async () =>
  (await post('/decision-machine-1/yes-no', { text: update300(n++), statement: 'The client must act.' })).ms;

const idle: number[] = [];
for (let i = 0; i < Number(values.idle); i++) idle.push(await yesNo());

const zeroShot: string[] = [];
for (let t = 0; t < TOPICS.length; t++)
  for (const k of [8, 9])
    zeroShot.push(
      (await post('/decision-machine-1/classify', { text: text(t, k), labels: LABELS })).json.label as string,
    );

// A decision the service makes, then its correction by id (as an operator corrects a dashboard's).
const correct = async (t: number, k: number) => {
  const decided = await post('/decision-machine-1/classify', { text: text(t, k), labels: LABELS });
  const res = await post('/decision-machine-1/feedback', { id: decided.id, expect: { label: LABELS[t] } });
  if (res.status !== 202) throw new Error(`feedback: ${res.status} ${JSON.stringify(res.json)}`);
};
const taughtFirst = [...Array(8 * TOPICS.length - 1).keys()].map((i) => [
  i % TOPICS.length,
  Math.floor(i / TOPICS.length),
]);
const readSeconds: number[] = [];
for (const [t, k] of taughtFirst) {
  const sent = performance.now();
  await correct(t!, k!);
  await feedback.refits.settled();
  readSeconds.push((performance.now() - sent) / 1000);
}

// The last correction completes 8 per label: the refit is due, and the client's requests start.
await correct(TOPICS.length - 1, 7);
const taught = performance.now();

// Requests one after another while the refit runs, until the head is listed.
const during: number[] = [];
let headAt: number | undefined;
while (headAt === undefined && performance.now() - taught < 900_000) {
  during.push(await yesNo());
  const listed = (await (await fetch(`${url}/heads`)).json()) as { data: unknown[] };
  if (listed.data.length > 0) headAt = performance.now();
}
await feedback.refits.settled();

let right = 0;
let rightZeroShot = 0;
let decidedByHead = 0;
for (let t = 0, i = 0; t < TOPICS.length; t++)
  for (const k of [8, 9]) {
    const r = await post('/decision-machine-1/classify', { text: text(t, k), labels: LABELS });
    right += r.json.label === LABELS[t] ? 1 : 0;
    rightZeroShot += zeroShot[i++] === LABELS[t] ? 1 : 0;
    decidedByHead += r.head ? 1 : 0;
  }

const p50 = (xs: number[]) => percentile(xs, 50);
const report = {
  machine: service.engine.versions.system,
  slots: config.slots,
  threads: config.threads,
  labels: LABELS.length,
  corrections: 8 * LABELS.length,
  yesNoP50Ms: {
    idle: Math.round(p50(idle)),
    duringRefit: during.length > 0 ? Math.round(p50(during)) : null,
  },
  requestsDuringRefit: during.length,
  ratio: during.length > 0 ? Number((p50(during) / p50(idle)).toFixed(2)) : null,
  // Each of the first 127 on the idle service: its decision, its correction, its reading.
  secondsPerCorrection: {
    p50: Number(percentile(readSeconds, 50).toFixed(1)),
    max: Number(Math.max(...readSeconds).toFixed(1)),
  },
  secondsToHead: headAt === undefined ? null : Number(((headAt - taught) / 1000).toFixed(1)),
  heldOut: { texts: 2 * LABELS.length, head: right, zeroShot: rightZeroShot, decidedByHead },
};
console.log(JSON.stringify(report, null, 2));
recordRun('feedback', report);
await close();
