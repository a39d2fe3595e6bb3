// --recommend: per workload (a capability with its batch, questions, text length and labels), the
// service's row with the most decisions/s whose p99 is within the bound and that was refused
// nothing, printed as the environment variables that give a deployment that setting.
import type { Row } from './sweep.js';

export function recommend(rows: Row[], p99Ms: number): string {
  const workloads = new Map<string, Row[]>();
  for (const r of rows.filter((r) => r.engine === 'decision-machine')) {
    const key = [r.capability, r.batch, r.questions, r.textChars, r.labels].join('|');
    workloads.set(key, [...(workloads.get(key) ?? []), r]);
  }
  const lines = [`Most decisions/s at p99 <= ${p99Ms} ms:`];
  for (const candidates of workloads.values()) {
    const r0 = candidates[0]!;
    const shape = [
      r0.batch !== null && `${plural(r0.batch, 'text')} per call`,
      r0.questions !== null && plural(r0.questions, 'question'),
      r0.labels !== null && plural(r0.labels, 'label'),
      r0.textChars !== null && plural(r0.textChars, 'character'),
    ].filter(Boolean);
    lines.push(`- ${r0.capability}${shape.length ? ` (${shape.join(', ')})` : ''}:`);
    const fits = candidates.filter((r) => r.p99Ms.mean <= p99Ms && r.refused === 0 && r.errors === 0 && r.requests > 0);
    if (fits.length === 0) {
      const best = Math.min(...candidates.map((r) => r.p99Ms.mean));
      lines.push(`  no setting measured meets it (the lowest p99 was ${best.toFixed(0)} ms)`);
      continue;
    }
    const best = fits.reduce((a, b) => (b.decisionsPerSecond.mean > a.decisionsPerSecond.mean ? b : a));
    lines.push(
      `  ${best.decisionsPerSecond.mean.toFixed(2)} decisions/s at p99 ${best.p99Ms.mean.toFixed(0)} ms with ${plural(best.concurrency, 'client')} in flight`,
    );
    // A deployment at --url: its threads are unknown here, and its settings are what they are.
    if (best.slots === null || best.threads === null)
      lines.push('  (the deployment as it runs, with its own settings)');
    else {
      const queue = Math.max(0, best.concurrency - best.slots);
      lines.push(`  DM_SLOTS=${best.slots} DM_THREADS=${best.threads} DM_QUEUE=${queue}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
