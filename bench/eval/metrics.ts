// Calibration measures over (probability, outcome) pairs, and the reliability diagram that draws them.

/**
 * A stated probability and whether the thing it is the probability of held (1) or not (0); `w` weighs it in the
 * measures below (1 when absent), so a sample can stand for a population with other shares.
 */
export interface Outcome {
  p: number;
  y: 0 | 1;
  w?: number;
}

const weight = (o: Outcome) => o.w ?? 1;

const BINS = 10;

function bins(outcomes: Outcome[]): { n: number; p: number; y: number }[] {
  const out = Array.from({ length: BINS }, () => ({ n: 0, p: 0, y: 0 }));
  for (const o of outcomes) {
    const b = out[Math.min(BINS - 1, Math.floor(o.p * BINS))]!;
    b.n += weight(o);
    b.p += weight(o) * o.p;
    b.y += weight(o) * o.y;
  }
  return out.map((b) => (b.n ? { n: b.n, p: b.p / b.n, y: b.y / b.n } : b));
}

/** Expected calibration error over 10 equal-width bins: the mean |stated - observed|, weighted by bin size. */
export function ece(outcomes: Outcome[]): number {
  const total = outcomes.reduce((s, o) => s + weight(o), 0);
  return bins(outcomes).reduce((s, b) => s + (b.n / total) * Math.abs(b.p - b.y), 0);
}

/** Brier score: the mean squared difference between probability and outcome. */
export function brier(outcomes: Outcome[]): number {
  const total = outcomes.reduce((s, o) => s + weight(o), 0);
  return outcomes.reduce((s, o) => s + weight(o) * (o.p - o.y) ** 2, 0) / total;
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

/** One curve per capability (observed share against mean stated probability, per non-empty bin). */
export function reliabilitySvg(title: string, byCapability: Map<string, Outcome[]>): string {
  const size = 360;
  const pad = 48;
  const x = (p: number) => pad + p * size;
  const y = (p: number) => pad + (1 - p) * size;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size + pad * 2 + 220}" height="${size + pad * 2}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${pad}" y="${pad / 2}" font-size="14">${title}</text>`,
    `<rect x="${pad}" y="${pad}" width="${size}" height="${size}" fill="none" stroke="#999"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#bbb" stroke-dasharray="4 4"/>`,
    ...[0, 0.2, 0.4, 0.6, 0.8, 1].flatMap((t) => [
      `<text x="${x(t)}" y="${y(0) + 16}" text-anchor="middle">${t.toFixed(1)}</text>`,
      `<text x="${x(0) - 6}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(1)}</text>`,
    ]),
    `<text x="${x(0.5)}" y="${y(0) + 34}" text-anchor="middle">stated probability (bin mean)</text>`,
    `<text transform="translate(${pad - 34} ${y(0.5)}) rotate(-90)" text-anchor="middle">observed share</text>`,
  ];
  [...byCapability]
    .filter(([, o]) => o.length > 0)
    .forEach(([cap, outcomes], i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      const points = bins(outcomes).filter((b) => b.n > 0);
      parts.push(
        `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map((b) => `${x(b.p).toFixed(1)},${y(b.y).toFixed(1)}`).join(' ')}"/>`,
      );
      for (const b of points)
        parts.push(
          `<circle cx="${x(b.p).toFixed(1)}" cy="${y(b.y).toFixed(1)}" r="${Math.min(6, 2 + Math.sqrt(b.n) / 2).toFixed(1)}" fill="${colour}"/>`,
        );
      parts.push(
        `<text x="${x(1) + 20}" y="${pad + 16 + i * 18}" fill="${colour}">${cap}: ECE ${ece(outcomes).toFixed(3)} (n=${outcomes.length})</text>`,
      );
    });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
