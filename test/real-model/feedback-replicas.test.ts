// Two replicas of the service on one real PostgreSQL, each with the real model: decisions made on
// one replica are corrected through the other, alternately, 8 per outcome. The decision is
// refitted once (one head version, one refit stored across both: the lease lets one replica
// refit it at a time), and both replicas apply the new head within 5 s of each other.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startPostgres } from '../helpers/databases.js';
import { startLearningServer } from '../helpers/learning-server.js';
import { post } from '../helpers/server.js';
import { FIRE, SEA } from '../helpers/sea-fire.js';

t.setTimeout(1_200_000);

const LABELS = ['red', 'blue'];
const MODEL = 'c'.repeat(64);
const dir = mkdtempSync(join(tmpdir(), 'dm-feedback-replicas-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const postgres = await startPostgres();
t.teardown(postgres.stop);

async function replica(name: string) {
  const config = loadConfig({}, { databaseUrl: postgres.url, journalDir: join(dir, name), rateLimit: 0 });
  const { url, access } = await startLearningServer(t, config, MODEL, 1);
  const refits = async (result: string) => {
    const line = (await access.metrics.text())
      .split('\n')
      .find((l) => l.startsWith(`dm_refits_total{result="${result}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  return { name, url, refits };
}

const replicas = [await replica('a'), await replica('b')];

const classify = async (url: string, text: string) => {
  const res = await post(`${url}/decision-machine-1/classify`, { text, labels: LABELS });
  return { id: res.headers.get('x-decision-id')!, head: res.headers.get('x-decision-head') };
};
const listed = async (url: string) =>
  ((await (await fetch(`${url}/heads`)).json()) as { data: { id: string; examples: number; fitted_at: string }[] })
    .data;

t.test('corrections sent to both replicas: one refit, and both apply its head within 5 s', async (t) => {
  let n = 0;
  for (let i = 0; i < 8; i++)
    for (const [text, label] of [
      [SEA[i]!, 'red'],
      [FIRE[i]!, 'blue'],
    ] as const) {
      const [decider, corrector] = n++ % 2 === 0 ? replicas : [replicas[1]!, replicas[0]!];
      const decided = await classify(decider!.url, text);
      const res = await post(`${corrector!.url}/decision-machine-1/feedback`, { id: decided.id, expect: { label } });
      t.equal(res.status, 202, `${text.slice(0, 24)}…: decided on ${decider!.name}, corrected on ${corrector!.name}`);
    }

  const started = performance.now();
  const appliedAt: number[] = [];
  while (appliedAt.length < 2 || appliedAt.some((x) => x === undefined)) {
    for (const [k, r] of replicas.entries())
      if (appliedAt[k] === undefined && (await classify(r.url, SEA[9]!)).head) appliedAt[k] = performance.now();
    if (performance.now() - started > 600_000) throw new Error('no head on both replicas within 600 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const apart = Math.abs(appliedAt[0]! - appliedAt[1]!) / 1000;
  t.comment(`the head decided on both replicas ${apart.toFixed(1)} s apart`);
  t.ok(apart <= 5, 'both apply the new head within 5 s');

  const [a, b] = await Promise.all(replicas.map((r) => listed(r.url)));
  t.equal(a!.length, 1, 'one head');
  t.same(
    b!.map((h) => [h.id, h.examples, h.fitted_at]),
    a!.map((h) => [h.id, h.examples, h.fitted_at]),
    'the same version on both, from all 16 corrections',
  );
  t.equal(a![0]!.examples, 16);
  const stored = (await Promise.all(replicas.map((r) => r.refits('stored')))).reduce((x, y) => x + y, 0);
  const skipped = (await Promise.all(replicas.map((r) => r.refits('skipped')))).reduce((x, y) => x + y, 0);
  t.comment(`refits: ${stored} stored, ${skipped} skipped (the lease held by the other replica, or not due)`);
  t.equal(stored, 1, 'one refit of the decision across the two replicas');
});
