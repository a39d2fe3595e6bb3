// Turning option log-probabilities into the spec's numbers.

/** Normalised probabilities (softmax) of log-probabilities. */
export function normalise(logprobs: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < logprobs.length; i++) max = Math.max(max, logprobs[i]!);
  const exp = Array.from(logprobs, (x) => Math.exp(x - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((x) => x / sum);
}

/** 1 minus normalised entropy: 1 for one clear winner, 0 for a flat distribution. */
export function confidence(p: number[]): number {
  if (p.length < 2) return 1;
  const h = p.reduce((sum, x) => (x > 0 ? sum - x * Math.log(x) : sum), 0);
  return Math.min(1, Math.max(0, 1 - h / Math.log(p.length)));
}

export function argmax(p: number[]): number {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
}

