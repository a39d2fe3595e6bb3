// Where a probability comes to depend on what the server did before: one yes-no request, sent to
// engines of the library in one situation at a time, against the same request as the first
// after start on a one-slot engine without a prompt cache. Prints, per situation, the
// probability and how far it is from that first one (0 when the bits are the same).
//
//   node dist/bench/eval/determinism.js
import { open, type DecisionMachine } from '../../src/index.js';
import type { Config } from '../../src/config.js';

const TEXT = 'Server db-7 has been at 97% disk usage since 02:00; backups are failing and alerts keep firing.';
const STATEMENT = 'The writer reports a problem.';
const OTHER = 'The quarterly report was sent to every shareholder on Monday, two days ahead of schedule.';
const LABELS = ['infrastructure incident', 'billing', 'feature request', 'praise'];
const BASE: Partial<Config> = { encoder: 'none', slots: 1, queue: 8, promptCacheMiB: 0, textReuse: 'off' };

async function yesNo(dm: DecisionMachine, text = TEXT): Promise<number> {
  const out = await dm.yesNo({ text, statement: STATEMENT });
  return (out as unknown as { probability: number }).probability;
}

async function engine(overrides: Partial<Config>, body: (dm: DecisionMachine) => Promise<number[]>) {
  const dm = await open({ ...BASE, ...overrides });
  try {
    return await body(dm);
  } finally {
    await dm.close();
  }
}

const rows: [string, number][] = [];
const [fresh, again, afterOther, afterClassify] = await engine({}, async (dm) => [
  await yesNo(dm),
  await yesNo(dm), // the whole prefix cached: only the statement is decoded
  (await yesNo(dm, OTHER), await yesNo(dm)), // the instructions cached, the text decoded with the statement
  (await dm.classify({ text: TEXT, labels: LABELS }), await yesNo(dm)), // another prompt before it
]);
rows.push(
  ['first request after start (reference)', fresh!],
  ['sent again at once (whole prefix from the slot cache)', again!],
  ['after a yes-no on another text (instructions cached)', afterOther!],
  ['after a classify on the same text', afterClassify!],
);
const [kept] = await engine({ promptCacheMiB: 64 }, async (dm) => {
  await yesNo(dm);
  await dm.classify({ text: OTHER, labels: LABELS });
  return [await yesNo(dm)]; // its prompt loaded back from the prompt cache
});
rows.push(['kept prompt loaded back from the prompt cache', kept!]);
const [slotA, slotB, beside] = await engine({ slots: 2 }, async (dm) => {
  const [a, b] = await Promise.all([yesNo(dm), yesNo(dm)]); // one on each slot
  const [, c] = await Promise.all([dm.classify({ text: OTHER, labels: LABELS }), yesNo(dm, TEXT)]);
  return [a!, b!, c!];
});
rows.push(
  ['2 slots, sent twice at once: one copy', slotA!],
  ['2 slots, sent twice at once: the other copy', slotB!],
  ['2 slots, beside a classify on the other slot', beside!],
);
const [oneThread] = await engine({ threads: 1 }, async (dm) => [await yesNo(dm)]);
rows.push(['1 thread per slot instead of 2', oneThread!]);

console.log('| situation | probability | difference from the first |');
console.log('|---|---|---|');
for (const [name, p] of rows) console.log(`| ${name} | ${p.toFixed(6)} | ${Math.abs(p - fresh!).toExponential(2)} |`);
