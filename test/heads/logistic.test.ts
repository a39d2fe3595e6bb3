// The head's arithmetic on synthetic readings: what it learns, what it keeps of the zero-shot
// reading, and that cross-validation keeps the zero-shot reading when the features teach nothing.
import t from 'tap';
import { choose } from '../../src/heads/learn.js';
import { argmax } from '../../src/decisions/distribution.js';
import { fit, headScores, Projection, type Example } from '../../src/heads/logistic.js';
import { decodeParams, encodeParams } from '../../src/heads/heads.js';
import { uniform } from '../../src/heads/random.js';

/** Draws in [-0.5, 0.5). */
function random(seed: number): () => number {
  const next = uniform(seed);
  return () => next() - 0.5;
}

/** n readings of `k` outcomes in `dim` dimensions: the outcome shifts `informative` dimensions. */
function readings(
  n: number,
  k: number,
  dim: number,
  informative: boolean,
  base: (label: number) => number[],
  seed: number,
) {
  const r = random(seed);
  return Array.from({ length: n }, (_, i): Example => {
    const label = i % k;
    const hidden = Float32Array.from({ length: dim }, (_, j) => r() + (informative && j % k === label ? 1.5 : 0) + 3);
    return { hidden, base: base(label), label };
  });
}

const flat = (k: number) => () => Array.from({ length: k }, () => Math.log(1 / k));

t.test('a head learns outcomes the zero-shot reading cannot tell apart', async (t) => {
  const train = readings(80, 4, 32, true, flat(4), 1);
  const test = readings(80, 4, 32, true, flat(4), 2);
  const p = new Projection(train);
  const params = p.params(
    fit(
      p,
      train.map((_, i) => i),
      4,
      0.01,
    ),
    4,
  );
  const right = test.filter((e) => argmax(headScores(params, e.hidden, e.base)) === e.label).length;
  t.ok(right / test.length > 0.9, `test accuracy ${right}/${test.length}`);
  // Stored and read back, the head decides the same.
  const back = decodeParams(encodeParams(params), 4, 32);
  t.same(headScores(back, test[0]!.hidden, test[0]!.base), headScores(params, test[0]!.hidden, test[0]!.base));
});

t.test('with no weights a head decides as the zero-shot reading', async (t) => {
  const train = readings(40, 2, 16, false, (l) => (l === 1 ? [-2, -0.1] : [-0.1, -2]), 3);
  const p = new Projection(train);
  const params = p.params(
    fit(
      p,
      train.map((_, i) => i),
      2,
      Infinity,
    ),
    2,
  );
  t.same(
    Array.from(params.weights).filter((w) => w !== 0),
    [],
    'Infinity fits the bias alone',
  );
  for (const e of train) t.equal(argmax(headScores(params, e.hidden, e.base)), e.label);
});

t.test('cross-validation keeps the zero-shot reading when the hidden states carry nothing', async (t) => {
  // The zero-shot reading is right 3 times in 4; every hidden state is the same vector.
  const base = (l: number, i: number) => ((i % 4 === 0 ? 1 - l : l) === 1 ? [-2, -0.1] : [-0.1, -2]);
  const examples = Array.from({ length: 64 }, (_, i): Example => {
    const label = i % 2;
    return { hidden: Float32Array.from({ length: 24 }, (_, j) => j), base: base(label, i >> 1), label };
  });
  const chosen = choose(examples, 2, 4, 1);
  t.equal(chosen.zeroShot, 0.75);
  t.equal(chosen.strength, null, 'no head: nothing would be stored');
  t.equal(chosen.accuracy, 0.75);
});
