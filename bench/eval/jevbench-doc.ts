// docs/jevbench.md from bench/eval/jevbench.ts's recorded runs (bench/results/jevbench.json): the
// latest accuracy run and, per coherence dimension, the newest run that scored it, beside the
// leaderboard's rows.

// The leaderboard's rows (jevbench.github.io, release 0.1.0): coherence, its five dimensions, accuracy.
const LEADERBOARD = [
  ['Open-Jev-9B', '9.7B', 83.9, 81.9, 100, 50.2, 87.1, 100, 88.4],
  ['decider-4b v2.1', '4.2B', 78.4, 80.3, 100, 52.5, 78.8, 80.6, 88.6],
  ['rsi-jev-2b', '2.3B', 72.2, 73.1, 100, 32.1, 73.8, 81.9, 85.2],
  ['decider-2b', '1.9B', 71.7, 78.6, 100, 38.0, 67.1, 75.0, 84.9],
  ['OpenThai-SystemOne', '0.75B', 64.2, 76.9, 70.8, 39.7, 61.3, 72.2, 82.4],
  ['Von 1.3 (encoder)', '395M', 75.9, 83.1, 100, 16.4, 80.0, 100, 72.2],
  ['Laya (encoder)', '421M', 56.5, 52.5, 100, 16.4, 67.9, 45.8, 70.8],
] as const;
const DIMENSIONS = ['REP', 'BAT', 'MEA', 'LOG', 'CHO'];

export type Tally = { right: number; of: number };
export const pct = (t: Tally) => (t.of === 0 ? '-' : `${((100 * t.right) / t.of).toFixed(1)}%`);

/** A run's record in bench/results/jevbench.json (`date` is recordRun's): accuracy, or some dimensions' coherence. */
export interface AccuracyRun {
  date: string;
  machine: string;
  cases: number;
  perDomain: number | null;
  accuracy: { all: Tally; byKind: Record<string, Tally>; byDomain: Record<string, Tally> };
  medianSecondsPerCase: number;
}
export interface CoherenceRun {
  date: string;
  machine: string;
  revision: string;
  coherence: {
    pillars: Record<string, number | null>;
    groups: Record<string, number | null>;
    relations: Record<string, number | null>;
    requests: number;
    wallSeconds: number;
    printed: string;
  };
}

/** docs/jevbench.md from the latest accuracy run and each dimension's latest coherence run. */
export function jevbenchDoc(runs: unknown[]): string {
  const newest = <T extends { date: string }>(xs: T[]) => xs.sort((a, b) => (a.date < b.date ? 1 : -1))[0];
  const acc = newest(runs.filter((r): r is AccuracyRun => typeof r === 'object' && r !== null && 'accuracy' in r));
  const coh = runs.filter((r): r is CoherenceRun => typeof r === 'object' && r !== null && 'coherence' in r);
  // Each dimension from the newest run that scored it.
  const byDimension = new Map(
    DIMENSIONS.flatMap((d) => {
      const r = newest(coh.filter((c) => typeof c.coherence.pillars[d] === 'number'));
      return r ? [[d, r] as [string, CoherenceRun]] : [];
    }),
  );
  const score = (d: string) => {
    const x = byDimension.get(d)?.coherence.pillars[d];
    return typeof x === 'number' ? (100 * x).toFixed(1) : 'not run';
  };
  const overall =
    byDimension.size === DIMENSIONS.length
      ? (DIMENSIONS.reduce((s, d) => s + byDimension.get(d)!.coherence.pillars[d]!, 0) * 20).toFixed(1)
      : 'not all run';
  const accuracyCell = acc
    ? `**${pct(acc.accuracy.all)}** of ${acc.accuracy.all.of}${acc.perDomain === null ? '' : ` (${acc.cases} cases, ${acc.perDomain} per domain)`}`
    : 'not run';
  const table = [
    '| model | size | coherence | REP | BAT | MEA | LOG | CHO | accuracy |',
    '|---|---|---|---|---|---|---|---|---|',
    ...LEADERBOARD.map((r) => `| ${r.join(' | ')}% |`),
    `| **decision-machine-1** | 1.5B | ${overall} | ${DIMENSIONS.map(score).join(' | ')} | ${accuracyCell} |`,
  ];
  const sections = ['# JevBench', ''];
  sections.push(
    'Our row is the latest run of each part, both by `bench/eval/jevbench.ts` on the default model:',
    'the accuracy, and each coherence dimension (jevbench-mini) from the newest run that scored it.',
    "The leaderboard's rows are release 0.1.0's.",
    '',
    ...table,
  );
  if (acc) {
    sections.push(
      '',
      '## Accuracy',
      '',
      `\`node dist/bench/eval/jevbench.js${acc.perDomain === null ? '' : ` --per-domain ${acc.perDomain}`}\`, ${acc.date.slice(0, 10)}, ${acc.machine},`,
      `one case at a time (median ${acc.medianSecondsPerCase.toFixed(1)} s per case). Each case's base request against`,
      "JevBench's gold (`data/gold.jsonl`, answers it calls unknown left out), argmax with ties shared, as",
      'the leaderboard scores it.',
      '',
      '| kind | right |',
      '|---|---|',
      ...['noul', 'choice', 'score'].map(
        (k) => `| ${k} | ${pct(acc.accuracy.byKind[k]!)} of ${acc.accuracy.byKind[k]!.of} |`,
      ),
      '',
      '| domain | right |',
      '|---|---|',
      ...Object.entries(acc.accuracy.byDomain).map(([d, t]) => `| ${d} | ${pct(t)} of ${t.of} |`),
    );
  }
  for (const r of new Set(byDimension.values())) {
    const dims = DIMENSIONS.filter((d) => byDimension.get(d) === r);
    const named = Object.entries(r.coherence.pillars)
      .filter(([, x]) => typeof x === 'number')
      .map(([d]) => d);
    sections.push(
      '',
      `## Coherence: ${dims.join(', ')}`,
      '',
      `\`node dist/bench/eval/jevbench.js --coherence${named.length === DIMENSIONS.length ? '' : ` --dimensions ${named.join(',')}`}\`, ${r.date.slice(0, 10)}, ${r.machine},`,
      `revision ${r.revision}: ${r.coherence.requests} requests in ${(r.coherence.wallSeconds / 60).toFixed(0)} min. As \`jevbench eval\` prints it,`,
      'then each relation (the share of its tests whose law held within the tolerance):',
      '',
      '```',
      r.coherence.printed,
      '```',
      '',
      '| relation | held |',
      '|---|---|',
      ...Object.entries(r.coherence.relations).map(
        ([k, x]) => `| ${k} | ${typeof x === 'number' ? (100 * x).toFixed(1) : '-'} |`,
      ),
    );
  }
  return `${sections.join('\n')}\n`;
}
