// Hidden states from the engine (ScoreJob.hidden): the final layer's state after the output norm
// at each branch's last token, or the residual stream after chosen layers (hiddenLayers),
// returned beside the log-probabilities, on the real default model.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { type ScoreJob, type ScoreResult } from '../../src/binding.js';
import { readF32Tensor } from '../helpers/gguf.js';
import { testModelPath } from '../helpers/model.js';
import { scoreRound } from '../helpers/requests.js';

const modelPath = await testModelPath();
const engine = await Engine.open({
  modelPath,
  slots: 1,
  threads: 2,
  queue: 2,
  contextSize: 2048,
  batchSize: 256,
  promptCacheMiB: 64,
});
t.teardown(() => engine.close());

const text = 'The Eiffel Tower is in Paris. It was completed in 1889 and is made of wrought iron.';
const STATEMENTS = [' The tower is in Paris.', ' The tower is made of wood.', ' It was finished in 1889.'];
const job = (statements: string[], hidden?: boolean, prompt = text): ScoreJob => ({
  prefix: engine.tokenize(`Context: ${prompt}\nDoes the statement hold? Answer Yes or No.\nStatement:`),
  branches: statements.map((s) => engine.tokenize(s)),
  options: [engine.tokenize(' Yes'), engine.tokenize(' No')],
  ...(hidden === undefined ? {} : { hidden }),
});
const score = async (j: ScoreJob): Promise<ScoreResult> => (await scoreRound(engine, [j]))[0]!;
const n = engine.hiddenSize;
const row = (r: ScoreResult, b: number) => Buffer.from(r.hidden!.buffer, r.hidden!.byteOffset + b * n * 4, n * 4);
const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

t.test('hiddenSize is the width of the model (its output norm)', async (t) => {
  const gamma = await readF32Tensor(modelPath, 'output_norm.weight');
  t.equal(n, gamma.length);
});

t.test('a job that asks gets branches x hiddenSize finite floats, one row per branch', async (t) => {
  const r = await score(job(STATEMENTS, true));
  t.equal(r.hidden!.length, STATEMENTS.length * n);
  t.ok(r.hidden!.every(Number.isFinite), 'every value finite');
  for (let a = 0; a < STATEMENTS.length; a++)
    for (let b = a + 1; b < STATEMENTS.length; b++) t.not(row(r, a).compare(row(r, b)), 0, `rows ${a} and ${b} differ`);
});

t.test('asking changes no log-probability; a job that does not ask gets no hidden states', async (t) => {
  const without = await score(job(STATEMENTS));
  const asked = await score(job(STATEMENTS, true));
  const off = await score(job(STATEMENTS, false));
  t.equal(without.hidden, undefined);
  t.equal(off.hidden, undefined);
  t.same(bytes(asked.logprobs), bytes(without.logprobs), 'the same bytes with and without');
  t.same(bytes(off.logprobs), bytes(without.logprobs));
});

t.test('rows are the output norm: each is a unit-RMS vector times the norm weight', async (t) => {
  // result_norm = x / rms(x) * gamma, so (h / gamma) has a mean square of 1 (less llama.cpp's eps).
  const gamma = await readF32Tensor(modelPath, 'output_norm.weight');
  const r = await score(job(STATEMENTS, true));
  for (let b = 0; b < STATEMENTS.length; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += (r.hidden![b * n + i]! / gamma[i]!) ** 2;
    t.ok(Math.abs(sum / n - 1) < 1e-3, `row ${b}: mean square ${sum / n}`);
  }
});

t.test(
  'many long branches (two groups, several decodes each) and a multi-token option: one row per branch',
  async (t) => {
    // A two-token option halves the group of branches decoded together (scoring.cpp): 20 branches
    // take two groups, and the option's own decodes ask for no hidden state. 16 branches of ~20
    // tokens are more than a batch (256): a group's rows come from two llama_decode calls.
    const statements = Array.from(
      { length: 20 },
      (_, i) => ` Statement number ${i + 1} holds, and the tower has stood in Paris since the year 1889.`,
    );
    const multi = { ...job(statements, true), options: [engine.tokenize(' Yes'), engine.tokenize(' Not at all')] };
    t.ok(16 * Math.min(...multi.branches.map((b) => b.length)) > 256, 'a group is more than one batch');
    const r = await score(multi);
    t.equal(r.hidden!.length, statements.length * n);
    const alone = await score({ ...multi, branches: [multi.branches[13]!] });
    const plain = await score({ ...multi, hidden: false });
    t.same(bytes(plain.logprobs), bytes(r.logprobs), 'asking changes no log-probability');
    t.same(row(alone, 0), row(r, 13), 'branch 13 alone has the row it has among 20');
  },
);

t.test("a branch's row has the same bytes alone or among others, whatever ran before", async (t) => {
  const all = await score(job(STATEMENTS, true));
  await score(job([' Something else entirely.'], true, 'A different text about the weather in Oslo.'));
  for (let b = 0; b < STATEMENTS.length; b++) {
    const alone = await score(job([STATEMENTS[b]!], true));
    t.same(row(alone, 0), row(all, b), `branch ${b}`);
    await score(job(STATEMENTS.slice(0, b + 1).reverse(), false));
  }
  const again = await score(job(STATEMENTS, true));
  t.same(bytes(again.hidden!), bytes(all.hidden!), 'the whole job again, after the others');
});

// hiddenLayers: the last layer's residual stream is read from an outputs-only tensor, a middle
// layer's from one with a row per token of the batch (the capture picks the branches' last tokens).
const L = engine.layerCount;
const LAST = L - 1;
const MIDDLE = Math.floor(L / 2);
const layered = (statements: string[], hiddenLayers: number[], prompt = text): ScoreJob => ({
  ...job(statements, true, prompt),
  hiddenLayers,
});
// Layer k's row of branch b in a result asking `layers` layers.
const layerRow = (r: ScoreResult, layers: number, b: number, k: number) =>
  Buffer.from(r.hidden!.buffer, r.hidden!.byteOffset + (b * layers + k) * n * 4, n * 4);

t.test('hiddenLayers [-1] is the default: the same bytes as a job without hiddenLayers', async (t) => {
  const plain = await score(job(STATEMENTS, true));
  const asked = await score(layered(STATEMENTS, [-1]));
  t.same(bytes(asked.hidden!), bytes(plain.hidden!));
});

t.test('three layers: 3 x hiddenSize per branch in the order asked, the -1 part the plain row', async (t) => {
  const plain = await score(job(STATEMENTS, true));
  const r = await score(layered(STATEMENTS, [-1, LAST, MIDDLE]));
  t.equal(r.hidden!.length, STATEMENTS.length * 3 * n);
  t.ok(r.hidden!.every(Number.isFinite), 'every value finite');
  t.same(bytes(r.logprobs), bytes(plain.logprobs), 'asking changes no log-probability');
  for (let b = 0; b < STATEMENTS.length; b++) {
    t.same(layerRow(r, 3, b, 0), row(plain, b), `branch ${b}: the -1 row`);
    t.not(layerRow(r, 3, b, 1).compare(layerRow(r, 3, b, 2)), 0, `branch ${b}: layers ${LAST} and ${MIDDLE} differ`);
  }
  const swapped = await score(layered(STATEMENTS, [MIDDLE, -1]));
  t.same(layerRow(swapped, 2, 1, 0), layerRow(r, 3, 1, 2), 'a layer asked first has the row it has asked last');
});

t.test(`layer ${LAST}'s row through the output norm is the -1 row, to float rounding`, async (t) => {
  // result_norm = x / sqrt(mean(x^2) + eps) * gamma with x the last layer's output (eps: Qwen2.5's
  // 1e-6, negligible beside these rows' mean square).
  const gamma = await readF32Tensor(modelPath, 'output_norm.weight');
  const r = await score(layered(STATEMENTS, [LAST, -1]));
  for (let b = 0; b < STATEMENTS.length; b++) {
    const x = r.hidden!.subarray(b * 2 * n, b * 2 * n + n);
    const h = r.hidden!.subarray(b * 2 * n + n, (b + 1) * 2 * n);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += x[i]! ** 2;
    const scale = 1 / Math.sqrt(sum / n + 1e-6);
    let worst = 0;
    for (let i = 0; i < n; i++)
      worst = Math.max(worst, Math.abs(x[i]! * scale * gamma[i]! - h[i]!) / (Math.abs(h[i]!) + 1e-3));
    t.ok(worst < 1e-4, `branch ${b}: largest relative difference ${worst}`);
  }
});

t.test(`layer ${MIDDLE}'s row of a branch has the same bytes in a job of one branch or of several`, async (t) => {
  // The prefix is prefilled in the same decode as the branches: the batch has many more tokens
  // than outputs, so a row taken from the wrong token would differ.
  const prompt = 'A fresh text: the harbour of Bergen was busy with fishing boats in 1905.';
  const all = await score(layered(STATEMENTS, [MIDDLE, -1], prompt));
  for (let b = 0; b < STATEMENTS.length; b++) {
    const alone = await score(layered([STATEMENTS[b]!], [MIDDLE], prompt));
    t.same(layerRow(alone, 1, 0, 0), layerRow(all, 2, b, 0), `branch ${b}`);
  }
});

t.test('a bad hiddenLayers is refused with a TypeError naming it', async (t) => {
  for (const bad of [[L], [1.5], ['x'], [-2], [], [3, 3], 'x'])
    await t.rejects(score({ ...job(STATEMENTS, true), hiddenLayers: bad as number[] }), {
      name: 'TypeError',
      message: /job\.hiddenLayers/,
    });
  const ignored = await score({ ...job(STATEMENTS, false), hiddenLayers: [L] });
  t.equal(ignored.hidden, undefined, 'read only when the job asks');
});

t.test(`many long branches over several decodes: layer ${MIDDLE}'s row of a branch is its row alone`, async (t) => {
  // 20 branches of ~20 tokens with a two-token option: two groups, each more than one batch
  // (256), so a group's rows come from two llama_decode calls, each with its own output tokens.
  const statements = Array.from(
    { length: 20 },
    (_, i) => ` Statement number ${i + 1} holds, and the tower has stood in Paris since the year 1889.`,
  );
  const multi = {
    ...layered(statements, [MIDDLE, -1]),
    options: [engine.tokenize(' Yes'), engine.tokenize(' Not at all')],
  };
  const r = await score(multi);
  t.equal(r.hidden!.length, statements.length * 2 * n);
  for (const b of [0, 13, 19]) {
    const alone = await score({ ...multi, branches: [multi.branches[b]!] });
    t.same(layerRow(alone, 2, 0, 0), layerRow(r, 2, b, 0), `branch ${b}`);
  }
});
