// The few statistics a sweep reports: nearest-rank percentiles of one repetition's latencies, the
// mean and sample standard deviation over repetitions, and a quantile read from a Prometheus
// histogram's cumulative buckets (linear within the bucket, as PromQL's histogram_quantile does).

/** The nearest-rank `p`-th percentile (0-100) of `xs`; NaN for no values. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A value over repetitions: its mean and sample standard deviation (0 for one repetition). */
export interface Spread {
  mean: number;
  sd: number;
}

export function spread(xs: readonly number[]): Spread {
  const finite = xs.filter(Number.isFinite);
  if (finite.length === 0) return { mean: NaN, sd: NaN };
  const mean = finite.reduce((a, b) => a + b, 0) / finite.length;
  if (finite.length === 1) return { mean, sd: 0 };
  const variance = finite.reduce((a, x) => a + (x - mean) ** 2, 0) / (finite.length - 1);
  return { mean, sd: Math.sqrt(variance) };
}

/** Cumulative bucket counts by upper bound (`+Inf` last), as `_bucket{le=...}` lines give them. */
export type Buckets = [upper: number, count: number][];

/** The `q` quantile (0-1) of the observations counted in `buckets`; NaN when none were. */
export function bucketQuantile(buckets: Buckets, q: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [upper, count] of buckets) {
    if (count >= rank) {
      if (!Number.isFinite(upper)) return lower; // beyond the last finite bound: its bound is all we know
      return lower + ((upper - lower) * (rank - below)) / Math.max(1, count - below);
    }
    [lower, below] = [upper, count];
  }
  return lower;
}

/** `after - before`, bucket by bucket (the observations made between two scrapes). */
export function bucketDelta(before: Buckets, after: Buckets): Buckets {
  return after.map(([upper, count], i) => [upper, count - (before[i]?.[1] ?? 0)]);
}
