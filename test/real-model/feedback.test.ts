// Decisions that learn from use, on the real model behind the real gate (keys on): two
// organizations route texts about the sea and about fire with labels "red" and "blue", and correct
// the decisions through POST .../feedback in opposite ways (acme: sea is red; globex: sea is
// blue). At 8 corrections per outcome each organization's head is refitted online and decides its
// own requests, named in x-decision-head with its organization; neither decides the other's.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { issueKey } from '../../src/auth/keys.js';
import { readLine } from '../../src/heads/fit.js';
import { modelSha256 } from '../../src/models/identity.js';
import { startLearningServer } from '../helpers/learning-server.js';
import { post } from '../helpers/server.js';
import { cliEnv, testModelPath } from '../helpers/model.js';
import { FIRE, SEA } from '../helpers/sea-fire.js';

// Every correction is a decision first, and each refit reads its examples: minutes on 2 cores.
t.setTimeout(1_500_000);

const LABELS = ['red', 'blue'];
// The model file's own SHA-256, as a server records it, so `heads refit` (below) finds the readings kept.
const MODEL = await modelSha256({ model: loadConfig().model, modelPath: await testModelPath() });

const dir = mkdtempSync(join(tmpdir(), 'dm-feedback-model-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig(
  {},
  { auth: 'on', databaseUrl: join(dir, 'service.db'), journalDir: join(dir, 'journal'), rateLimit: 0 },
);
const { url, access } = await startLearningServer(t, config, MODEL, 2);
const keys = {
  acme: (await issueKey(access.store, 'prod', 'acme')).key,
  globex: (await issueKey(access.store, 'prod', 'globex')).key,
};
type Org = keyof typeof keys;
const as = (org: Org) => ({ headers: { authorization: `Bearer ${keys[org]}`, 'content-type': 'application/json' } });
const classify = async (org: Org, text: string) => {
  const res = await post(`${url}/decision-machine-1/classify`, { text, labels: LABELS }, as(org));
  return {
    id: res.headers.get('x-decision-id')!,
    head: res.headers.get('x-decision-head'),
    label: res.json.label as string,
  };
};

/** Decides and corrects 8 texts of each kind; resolves with the ms from the last 202 to a head deciding. */
async function teach(org: Org, sea: string, fire: string): Promise<number> {
  let last = 0;
  for (let i = 0; i < 8; i++) {
    for (const [text, label] of [
      [SEA[i]!, sea],
      [FIRE[i]!, fire],
    ] as const) {
      const decided = await classify(org, text);
      const res = await post(`${url}/decision-machine-1/feedback`, { id: decided.id, expect: { label } }, as(org));
      if (res.status !== 202) throw new Error(`feedback ${res.status}: ${res.text}`);
      last = performance.now();
    }
  }
  for (;;) {
    const r = await classify(org, SEA[9]!);
    if (r.head) return performance.now() - last;
    if (performance.now() - last > 600_000) throw new Error(`${org}: no head after 600 s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

t.test('two organizations teach the same decision in opposite ways; each gets its own answers', async (t) => {
  const acmeMs = await teach('acme', 'red', 'blue');
  // Speed is measured by bench/feedback.ts; here only that the head comes and decides.
  t.comment(`acme: from the correction completing 8 per outcome to its head deciding: ${(acmeMs / 1000).toFixed(1)} s`);
  const globexMs = await teach('globex', 'blue', 'red');
  t.comment(`globex: ${(globexMs / 1000).toFixed(1)} s`);

  for (const [text, acme, globex] of [
    [SEA[8]!, 'red', 'blue'],
    [SEA[9]!, 'red', 'blue'],
    [FIRE[8]!, 'blue', 'red'],
    [FIRE[9]!, 'blue', 'red'],
  ] as const) {
    const a = await classify('acme', text);
    const g = await classify('globex', text);
    t.equal(a.label, acme, `acme: ${text}`);
    t.equal(g.label, globex, `globex: ${text}`);
    t.match(a.head, /^head_[0-9a-f]{16}; organization=acme$/);
    t.match(g.head, /^head_[0-9a-f]{16}; organization=globex$/);
  }

  const listed = async (org: Org) =>
    (
      (await (await fetch(`${url}/heads`, as(org))).json()) as {
        data: { id: string; organization: string; examples: number }[];
      }
    ).data;
  const [acmeHead] = await listed('acme');
  t.same(
    (await listed('acme')).map((h) => [h.organization, h.examples]),
    [['acme', 16]],
    'acme sees its own head only',
  );
  t.same(
    (await listed('globex')).map((h) => h.organization),
    ['globex'],
  );

  // A correction that confirms what the head answered counts for its live accuracy.
  const decided = await classify('acme', SEA[8]!);
  await post(`${url}/decision-machine-1/feedback`, { id: decided.id, expect: { label: 'red' } }, as('acme'));
  const after = ((await listed('acme')) as unknown as { id: string; live: { judged: number; right: number } }[]).find(
    (h) => h.id === acmeHead!.id,
  )!;
  t.same(after.live, { judged: 1, right: 1, accuracy: 1 }, 'live: one decision judged since the fit, right');
});

t.test('decision-machine heads refit refits a decision from its corrections, as a server does', async (t) => {
  const signature = readLine({ cap: 'classify', req: { text: 'x', labels: LABELS }, expect: { label: 'red' } }).sig.id;
  const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
  const run = spawnSync('node', [cli, 'heads', 'refit', signature, '--org', 'acme'], {
    env: await cliEnv(config.databaseUrl),
    encoding: 'utf8',
    timeout: 600_000,
  });
  t.equal(run.status, 0, run.stderr);
  const [header, row] = run.stdout.split('\n');
  t.match(header, /^head +capability +decision +examples/);
  t.match(row, /^head_[0-9a-f]{16} +classify .* 17 /, 'its 17 corrections (16 and the confirmation), fitted');
});
