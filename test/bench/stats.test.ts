// The sweep's statistics: nearest-rank percentiles, mean ± sd over repetitions, and the slot-wait
// median read from a Prometheus histogram's buckets between two scrapes.
import t from 'tap';
import { bucketDelta, bucketQuantile, percentile, spread } from '../../src/bench/stats.js';

t.test('percentiles by nearest rank', async (t) => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 .. 1, unsorted
  t.same([percentile(xs, 50), percentile(xs, 90), percentile(xs, 99), percentile(xs, 100)], [50, 90, 99, 100]);
  t.equal(percentile([7], 99), 7);
  t.ok(Number.isNaN(percentile([], 50)), 'no latency, no percentile');
});

t.test('mean and sample sd; one repetition has sd 0', async (t) => {
  t.same(spread([2, 4, 4, 4, 5, 5, 7, 9]), { mean: 5, sd: Math.sqrt(32 / 7) });
  t.same(spread([3]), { mean: 3, sd: 0 });
});

t.test('a histogram median, interpolated within its bucket, of the observations between two scrapes', async (t) => {
  const before: [number, number][] = [
    [0.01, 5],
    [0.1, 5],
    [1, 5],
    [Infinity, 5],
  ];
  const after: [number, number][] = [
    [0.01, 5],
    [0.1, 9],
    [1, 13],
    [Infinity, 13],
  ];
  const delta = bucketDelta(before, after); // 4 in (0.01, 0.1], 4 in (0.1, 1]
  t.same(delta, [
    [0.01, 0],
    [0.1, 4],
    [1, 8],
    [Infinity, 8],
  ]);
  t.equal(bucketQuantile(delta, 0.5), 0.1);
  t.ok(Math.abs(bucketQuantile(delta, 0.25) - 0.055) < 1e-12, 'a quarter: half way through the first bucket');
  t.ok(Number.isNaN(bucketQuantile(bucketDelta(after, after), 0.5)), 'nothing observed');
});
