// The one seeded generator of src/heads (mulberry32): folds, projections and the bench's samples
// are the same on every machine for a seed.

/** 32-bit unsigned draws, a fixed sequence per seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Draws in [0, 1). */
export function uniform(seed: number): () => number {
  const next = seeded(seed);
  return () => next() / 4294967296;
}

/** Shuffles `items` in place (Fisher-Yates) with draws of `random` in [0, 1). */
export function shuffleInPlace<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
