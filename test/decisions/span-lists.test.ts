// A copied list's spans: a span is as likely as its own tokens and what opened it, so an unsure
// "is there more?" after a span counts against the next span, never against the one already written.
import t from 'tap';
import { listProbabilities } from '../../src/decisions/span-lists.js';

const span = (own: number, first: number, close: number, stop = -Infinity) => ({
  start: 0,
  end: 1,
  logprob: own + close,
  firstLogprob: first,
  closeLogprob: close,
  stopLogprob: stop,
});

t.test('the closing token does not count against the span it closes', async (t) => {
  const sure = Math.log(0.95);
  const [a] = listProbabilities([span(sure, sure, Math.log(0.5))], -Infinity);
  const [b] = listProbabilities([span(sure, sure, Math.log(0.99))], -Infinity);
  t.ok(Math.abs(a! - 1) < 1e-9, `first span alone, certain copy: ${a}`);
  t.equal(a, b);
});

t.test('the first span competes with "nothing fits" at its first token', async (t) => {
  const first = Math.log(0.3);
  const [p] = listProbabilities([span(first, first, 0)], Math.log(0.3));
  t.ok(Math.abs(p! - 0.5) < 1e-9, `even odds against None: ${p}`);
});

t.test(
  'a later span: "another one" against "the end" where the span before closed, times its own tokens',
  async (t) => {
    const ps = listProbabilities(
      [
        span(Math.log(0.9), Math.log(0.9), Math.log(0.3), Math.log(0.1)),
        span(Math.log(0.8), Math.log(0.8), Math.log(0.7)),
      ],
      -Infinity,
    );
    t.ok(Math.abs(ps[1]! - 0.75 * 0.8) < 1e-9, `0.3 / (0.3 + 0.1) x 0.8, got ${ps[1]}`);
  },
);
