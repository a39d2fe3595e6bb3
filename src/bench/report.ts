// A sweep written out: a markdown table in llama-bench's layout (the settings, then each figure as
// mean ± sd over the repetitions), CSV (a column for each mean and each sd), JSON (the whole sweep)
// or JSON lines (one row a line).
import type { Output } from './plan.js';
import type { Spread } from './stats.js';
import type { Row, Sweep } from './sweep.js';

const SETTINGS = [
  ['engine', 'engine'],
  ['capability', 'capability'],
  ['slots', 'slots'],
  ['threads', 'threads'],
  ['concurrency', 'clients'],
  ['batch', 'batch'],
  ['questions', 'questions'],
  ['textChars', 'chars'],
  ['labels', 'labels'],
] as const;

const FIGURES = [
  ['decisionsPerSecond', 'decisions/s', 2],
  ['requestsPerSecond', 'requests/s', 2],
  ['inputTokensPerSecond', 'input tok/s', 1],
  ['p50Ms', 'p50 ms', 0],
  ['p90Ms', 'p90 ms', 0],
  ['p99Ms', 'p99 ms', 0],
  ['slotWaitP50Ms', 'slot wait p50 ms', 0],
  ['cpuPercent', 'CPU %', 0],
  ['rssMiB', 'RSS MiB', 0],
] as const;

const COUNTS = [
  ['requests', 'requests'],
  ['decisions', 'decisions'],
  ['refused', '529s'],
  ['errors', 'errors'],
] as const;

export function format(sweep: Sweep, output: Output): string {
  if (output === 'json') return `${JSON.stringify(sweep, null, 2)}\n`;
  if (output === 'jsonl') return sweep.rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  if (output === 'csv') return csv(sweep.rows);
  return markdown(sweep);
}

function markdown(sweep: Sweep): string {
  // The engine column only when a peer ran beside the service.
  const settings = SETTINGS.filter(([k]) => k !== 'engine' || sweep.rows.some((r) => r.engine !== 'decision-machine'));
  const header = [...settings.map(([, h]) => h), ...FIGURES.map(([, h]) => h), ...COUNTS.map(([, h]) => h)];
  const align = [...settings.map(() => ':---'), ...FIGURES.map(() => '---:'), ...COUNTS.map(() => '---:')];
  const lines = [header, align].map((cells) => `| ${cells.join(' | ')} |`);
  for (const row of sweep.rows) {
    const cells = [
      ...settings.map(([k]) => String(row[k] ?? '-')),
      ...FIGURES.map(([k, , digits]) => shown(row[k], digits)),
      ...COUNTS.map(([k]) => String(row[k])),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const m = sweep.machine;
  const reps = sweep.rows[0]?.repetitions ?? 0;
  lines.push(
    '',
    `${sweep.model}; ${m.cpus} CPUs (${m.cpuModel}), load average ${m.loadAverageAtStart.join(' ')} at the start; ` +
      `${reps} repetition${reps === 1 ? '' : 's'} per row; texts of seed ${sweep.seed}; ${sweep.note}; ${sweep.date}`,
  );
  return `${lines.join('\n')}\n`;
}

function shown(value: Spread | null, digits: number): string {
  if (value === null || !Number.isFinite(value.mean)) return '-';
  return `${value.mean.toFixed(digits)} ± ${value.sd.toFixed(digits)}`;
}

function csv(rows: Row[]): string {
  const header = [
    ...SETTINGS.map(([k]) => k),
    'repetitions',
    'decisionsPerRequest',
    ...COUNTS.map(([k]) => k),
    ...FIGURES.flatMap(([k]) => [`${k}Mean`, `${k}Sd`]),
  ];
  const cell = (v: unknown) =>
    v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v)) ? '' : String(v);
  const lines = rows.map((r) =>
    [
      ...SETTINGS.map(([k]) => cell(r[k])),
      cell(r.repetitions),
      cell(r.decisionsPerRequest),
      ...COUNTS.map(([k]) => cell(r[k])),
      ...FIGURES.flatMap(([k]) => [cell(r[k]?.mean), cell(r[k]?.sd)]),
    ].join(','),
  );
  return `${[header.join(','), ...lines].join('\n')}\n`;
}
