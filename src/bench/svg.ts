// The knee chart: decisions/s (up) against p99 latency (right), one line per configuration (a row's
// settings but the clients in flight), its points in order of the clients, each labelled with
// their number. Where a line turns flat, more clients only add latency.
import type { Row } from './sweep.js';

const COLORS = ['#2b6cb0', '#c05621', '#2f855a', '#9b2c2c', '#6b46c1', '#b7791f', '#2c7a7b', '#4a5568'];
const W = 720;
const H = 420;
const PLOT = { left: 70, right: 250, top: 30, bottom: 50 };

/** A configuration's name: every setting of the row but the clients in flight. */
function configuration(row: Row): string {
  const parts = [
    row.engine === 'decision-machine' ? '' : row.engine,
    row.capability,
    row.slots === null ? '' : `${row.slots} slots`,
    row.threads === null ? '' : `${row.threads} threads`,
    row.batch === null || row.batch === 1 ? '' : `batch ${row.batch}`,
    row.questions === null ? '' : `${row.questions} q`,
    row.labels === null ? '' : `${row.labels} labels`,
    row.textChars === null ? '' : `${row.textChars} ch`,
  ];
  return parts.filter(Boolean).join(', ');
}

export function kneeChart(rows: Row[]): string {
  const measured = rows.filter((r) => Number.isFinite(r.p99Ms.mean) && Number.isFinite(r.decisionsPerSecond.mean));
  const series = new Map<string, Row[]>();
  for (const r of measured) series.set(configuration(r), [...(series.get(configuration(r)) ?? []), r]);
  const maxX = nice(Math.max(1, ...measured.map((r) => r.p99Ms.mean)));
  const maxY = nice(Math.max(0.01, ...measured.map((r) => r.decisionsPerSecond.mean)));
  const x = (ms: number) => PLOT.left + (ms / maxX) * (W - PLOT.left - PLOT.right);
  const y = (d: number) => H - PLOT.bottom - (d / maxY) * (H - PLOT.top - PLOT.bottom);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="${PLOT.left}" y="18" font-weight="bold" font-size="13">decisions/s against p99 latency; points: clients in flight</text>`,
    `<line x1="${PLOT.left}" y1="${y(0)}" x2="${x(maxX)}" y2="${y(0)}" stroke="#333"/>`,
    `<line x1="${PLOT.left}" y1="${y(0)}" x2="${PLOT.left}" y2="${y(maxY)}" stroke="#333"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const [tx, ty] = [(maxX * i) / 4, (maxY * i) / 4];
    out.push(
      `<text x="${x(tx).toFixed(1)}" y="${y(0) + 16}" text-anchor="middle">${tx.toFixed(0)}</text>`,
      `<text x="${PLOT.left - 6}" y="${(y(ty) + 4).toFixed(1)}" text-anchor="end">${ty.toFixed(maxY < 10 ? 1 : 0)}</text>`,
    );
  }
  out.push(
    `<text x="${(x(0) + x(maxX)) / 2}" y="${H - 12}" text-anchor="middle">p99 latency, ms</text>`,
    `<text x="16" y="${(y(0) + y(maxY)) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(y(0) + y(maxY)) / 2})">decisions/s</text>`,
  );
  [...series.entries()].forEach(([name, points], i) => {
    const color = COLORS[i % COLORS.length]!;
    const sorted = [...points].sort((a, b) => a.concurrency - b.concurrency);
    const xy = sorted.map((r) => `${x(r.p99Ms.mean).toFixed(1)},${y(r.decisionsPerSecond.mean).toFixed(1)}`);
    out.push(`<polyline points="${xy.join(' ')}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
    for (const r of sorted) {
      const [px, py] = [x(r.p99Ms.mean), y(r.decisionsPerSecond.mean)];
      out.push(
        `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="${color}"/>`,
        `<text x="${(px + 5).toFixed(1)}" y="${(py - 5).toFixed(1)}" fill="${color}">${r.concurrency}</text>`,
      );
    }
    const ly = PLOT.top + 10 + i * 16;
    out.push(
      `<line x1="${W - PLOT.right + 20}" y1="${ly - 4}" x2="${W - PLOT.right + 38}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${W - PLOT.right + 42}" y="${ly}">${escape(name)}</text>`,
    );
  });
  out.push('</svg>', '');
  return out.join('\n');
}

/** The least of 1, 2, 4, 5 or 10 x 10^k at or above `v`: an axis end whose quarters are round. */
function nice(v: number): number {
  const power = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 4, 5, 10].map((m) => m * power).find((m) => m >= v) ?? 10 * power;
}

function escape(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
