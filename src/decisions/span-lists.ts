// How likely each span of a copied list is. The first competes with "nothing fits" at its first
// token; a later one competes, where the span before it closed, as "another one" (the separator)
// against "the end" (a stop). A span's own closing token decides what follows, not whether it belongs.
import type { TokenSpan } from '../binding.js';

export function listProbabilities(spans: TokenSpan[], none: number): number[] {
  return spans.map((s, k) => {
    const own = s.logprob - s.closeLogprob;
    if (k === 0) return Math.exp(own - s.firstLogprob) / (1 + Math.exp(none - s.firstLogprob));
    const { closeLogprob: more, stopLogprob: end } = spans[k - 1]!;
    return Math.exp(own) / (1 + Math.exp(end - more));
  });
}
