// docs/jevbench.md from bench/eval/jevbench.ts's recorded runs (bench/results/jevbench.json): the
// latest accuracy run of every case and, per coherence dimension, the newest run that scored it,
// beside the leaderboard's rows; then smaller accuracy runs and runs of named relations, by revision.

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
  revision?: string; // recorded since 2026-12-07
  cases: number;
  perDomain: number | null;
  accuracy: { all: Tally; byKind: Record<string, Tally>; byDomain: Record<string, Tally> };
  medianSecondsPerCase: number;
}
export interface CoherenceRun {
  date: string;
  machine: string;
  revision: string;
  relations?: string[] | null; // the relations named, when the run asked only those
  coherence: {
    pillars: Record<string, number | null>;
    groups: Record<string, number | null>;
    relations: Record<string, number | null>;
    requests: number; // sent to the service
    cacheHits?: number; // answered from jevbench's request cache (recorded since 2026-12-07)
    wallSeconds: number;
    printed: string;
  };
}

/** How many requests a coherence run sent, how many its cache answered, and how long it took. */
function asked(r: CoherenceRun): string {
  const { requests, cacheHits, wallSeconds } = r.coherence;
  const cached = cacheHits === undefined ? '' : ` (and ${cacheHits} answered from the request cache)`;
  return `${requests} requests sent${cached} in ${(wallSeconds / 60).toFixed(0)} min`;
}

/** docs/jevbench.md from the latest accuracy run and each dimension's latest coherence run. */
export function jevbenchDoc(runs: unknown[]): string {
  const newest = <T extends { date: string }>(xs: T[]) => xs.sort((a, b) => (a.date < b.date ? 1 : -1))[0];
  const accs = runs.filter((r): r is AccuracyRun => typeof r === 'object' && r !== null && 'accuracy' in r);
  const acc = newest(accs.filter((r) => r.perDomain === null)) ?? newest(accs);
  const all = runs.filter((r): r is CoherenceRun => typeof r === 'object' && r !== null && 'coherence' in r);
  const coh = all.filter((r) => !r.relations);
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
      `revision ${r.revision}: ${asked(r)}. As \`jevbench eval\` prints it,`,
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
  const smaller = accs.filter((r) => r.perDomain !== null).sort((a, b) => (a.date < b.date ? -1 : 1));
  if (smaller.length > 0)
    sections.push(
      '',
      '## Smaller accuracy runs',
      '',
      'The first N cases of each domain (`node dist/bench/eval/jevbench.js --per-domain N`), a change measured',
      'on the same cases before and after it:',
      '',
      '| date | revision | cases | noul | choice | score | all |',
      '|---|---|---|---|---|---|---|',
      ...smaller.map(
        (r) =>
          `| ${r.date.slice(0, 10)} | ${r.revision ?? '-'} | ${r.cases} | ${['noul', 'choice', 'score'].map((k) => pct(r.accuracy.byKind[k]!)).join(' | ')} | ${pct(r.accuracy.all)} |`,
      ),
    );
  const named = all.filter((r) => r.relations).sort((a, b) => (a.date < b.date ? -1 : 1));
  if (named.length > 0)
    sections.push(
      '',
      '## Relations run alone',
      '',
      'A change measured on the laws it is for (`node dist/bench/eval/jevbench.js --coherence --relations R`);',
      'not a dimension score. Each relation: the share of its tests whose law held.',
      '',
      '| date | revision | relation | held | requests |',
      '|---|---|---|---|---|',
      ...named.flatMap((r) =>
        Object.entries(r.coherence.relations).map(
          ([k, x]) =>
            `| ${r.date.slice(0, 10)} | ${r.revision} | ${k} | ${typeof x === 'number' ? (100 * x).toFixed(1) : '-'} | ${asked(r)} |`,
        ),
      ),
    );
  return `${sections.join('\n')}\n`;
}
