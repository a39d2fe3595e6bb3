// Hidden states through the engine (ScoreJob.hidden), against the fake binding: the engine tells
// their width and hands the job's choice to the addon and its rows back, untouched.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { FAKE_HIDDEN_SIZE, FAKE_LAYER_COUNT, fakeBinding } from '../helpers/fake-binding.js';
import { SMALL } from '../helpers/server.js';
import { scoreRound } from '../helpers/requests.js';

const job = {
  prefix: Int32Array.of(1, 2),
  branches: [Int32Array.of(3), Int32Array.of(4, 5)],
  options: [Int32Array.of(6)],
};

t.test("hiddenSize is the binding's, and a job gets hidden rows only when it asks", async (t) => {
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, fakeBinding({ delayMs: 1 }));
  t.teardown(() => engine.close());
  t.equal(engine.hiddenSize, FAKE_HIDDEN_SIZE);
  const [asked, plain, off] = await scoreRound(engine, [{ ...job, hidden: true }, job, { ...job, hidden: false }]);
  t.equal(asked!.hidden!.length, job.branches.length * FAKE_HIDDEN_SIZE, 'branches x hiddenSize');
  t.equal(asked!.hidden![FAKE_HIDDEN_SIZE + 1], 5, "the second branch's row, as the binding wrote it");
  t.equal(plain!.hidden, undefined);
  t.equal(off!.hidden, undefined);
  t.same(asked!.logprobs, plain!.logprobs);
});

t.test("layerCount is the binding's, and hiddenLayers reaches it: a row per layer asked, in order", async (t) => {
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, fakeBinding({ delayMs: 1 }));
  t.teardown(() => engine.close());
  t.equal(engine.layerCount, FAKE_LAYER_COUNT);
  const [plain, layered] = await scoreRound(engine, [
    { ...job, hidden: true },
    { ...job, hidden: true, hiddenLayers: [2, -1] },
  ]);
  const width = 2 * FAKE_HIDDEN_SIZE;
  t.equal(layered!.hidden!.length, job.branches.length * width, 'branches x (layers x hiddenSize)');
  t.same(layered!.hidden!.subarray(width + FAKE_HIDDEN_SIZE, 2 * width), plain!.hidden!.subarray(FAKE_HIDDEN_SIZE));
  t.equal(layered!.hidden![width + 1], 5 * 4, "the second branch's layer 2 row, as the binding wrote it");
});
