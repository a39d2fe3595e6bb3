// Same request, same answer: 24 decisions (yes-no, classify, rate, answer on six texts) come back
// with the same bytes whatever ran before them, beside them, or on which slot: in order, in
// reverse, from 4 callers at once, and on a one-slot engine. Default settings otherwise, so the
// slot cache, the kept prompts and the slot pool all take part.
import t from 'tap';
import { open, type DecisionMachine } from '../../src/index.js';
import { testModelPath } from '../helpers/model.js';

const TEXTS = [
  'Server db-7 has been at 97% disk usage since 02:00; backups are failing and alerts keep firing.',
  'The quarterly report was sent to every shareholder on Monday, two days ahead of schedule.',
  'My parcel arrived with the screen smashed, and the courier left it in the rain.',
  'Dinner was lovely: warm bread, a perfect risotto and a waiter who remembered our names.',
  'Please reset the password of account 4411; the reset link expired before I could use it.',
  'The invoice of 230 EUR was charged twice in March and nobody at support has answered since.',
];
const LABELS = ['infrastructure incident', 'billing', 'delivery problem', 'praise', 'account access'];
const SCALE = ['very negative', 'negative', 'neutral', 'positive', 'very positive'];

type Request = (dm: DecisionMachine) => Promise<unknown>;
const REQUESTS: Request[] = TEXTS.flatMap((text): Request[] => [
  (dm) => dm.yesNo({ text, statement: 'The writer reports a problem.' }),
  (dm) => dm.classify({ text, labels: LABELS }),
  (dm) => dm.rate({ text, scale: SCALE }),
  (dm) => dm.answer({ text, question: 'What went wrong?' }),
]);

/** Every request's response body, as JSON (every probability to the last bit), by request. */
async function answers(dm: DecisionMachine, order: number[], callers: number): Promise<string[]> {
  const out: string[] = new Array<string>(REQUESTS.length);
  let next = 0;
  const caller = async () => {
    while (next < order.length) {
      const i = order[next++]!;
      out[i] = JSON.stringify(await REQUESTS[i]!(dm));
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return out;
}

const modelPath = await testModelPath();
const inOrder = REQUESTS.map((_, i) => i);
// Reversed, then every text's capabilities swapped pairwise: each request follows other ones.
const reordered = [...inOrder].reverse().map((i) => i ^ 1);

const two = await open({ modelPath, slots: 2, offline: 'on' });
const first = await answers(two, inOrder, 1);
const second = await answers(two, reordered, 1);
const concurrent = await answers(two, inOrder, 4);
await two.close();
const one = await open({ modelPath, slots: 1, offline: 'on' });
const single = await answers(one, reordered, 1);
await one.close();

t.test('the same request gives the same bytes in another order', async (t) => {
  for (let i = 0; i < REQUESTS.length; i++) t.equal(second[i], first[i], `request ${i}`);
});

t.test('the same request gives the same bytes from 4 callers at once', async (t) => {
  for (let i = 0; i < REQUESTS.length; i++) t.equal(concurrent[i], first[i], `request ${i}`);
});

t.test('the same request gives the same bytes on a one-slot engine', async (t) => {
  for (let i = 0; i < REQUESTS.length; i++) t.equal(single[i], first[i], `request ${i}`);
});

t.test('the answers are real decisions, not empty bodies', async (t) => {
  const yesNo = JSON.parse(first[0]!) as { answer: boolean; probability: number };
  t.ok(yesNo.probability > 0 && yesNo.probability < 1, `a probability from the model: ${yesNo.probability}`);
  const classify = JSON.parse(first[1]!) as { label: string };
  t.equal(classify.label, 'infrastructure incident');
});
