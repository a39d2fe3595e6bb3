// decision-machine decide on the real model: the same JSON the HTTP route returns, for a result
// and for an error envelope, with exit codes by status class.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { post, startServer } from '../helpers/server.js';
import { testModelPath } from '../helpers/model.js';

const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
const modelPath = await testModelPath();
const dir = mkdtempSync(join(tmpdir(), 'dm-decide-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// The engine settings of the test server, so both read the prompt alike; a store of its own (no
// heads: decide applies the heads of the store it is given).
const env = {
  ...process.env,
  DM_DATABASE_URL: join(dir, 'service.db'),
  DM_MODEL_PATH: modelPath,
  DM_ENCODER: 'none',
  DM_SLOTS: '2',
  DM_CONTEXT: '4096',
  DM_BATCH: '512',
  DM_PROMPT_CACHE_MIB: '64',
  DM_OFFLINE: 'on',
};
const server = await startServer(undefined, { modelPath });
t.teardown(server.close);

const decide = (args: string[], input?: string) => {
  const run = spawnSync('node', [cli, 'decide', ...args], { env, input, encoding: 'utf8', timeout: 300_000 });
  return {
    status: run.status,
    stdout: run.stdout,
    json: run.stdout ? JSON.parse(run.stdout) : undefined,
    stderr: run.stderr,
  };
};

t.test('a decision from stdin and from a file prints the route JSON, exit 0', async (t) => {
  const body = {
    texts: ['The invoice was paid in full on March 3.', 'The invoice has not been paid and is now overdue.'],
    statement: 'The invoice is unpaid.',
  };
  const http = await post(`${server.url}/v1/decision-machine-1/yes-no`, body);
  t.equal(http.status, 200);
  const fromStdin = decide(['yes-no'], JSON.stringify(body));
  t.equal(fromStdin.status, 0, fromStdin.stderr);
  t.same(fromStdin.json, http.json, 'the same JSON as POST /v1/decision-machine-1/yes-no');
  t.same(
    fromStdin.json.results.map((r: { answer: boolean }) => r.answer),
    [false, true],
  );
  const file = join(dir, 'classify.json');
  const classify = { text: 'My card was charged twice for one order.', labels: ['billing', 'shipping', 'account'] };
  writeFileSync(file, JSON.stringify(classify));
  const fromFile = decide(['classify', file]);
  t.equal(fromFile.status, 0, fromFile.stderr);
  const route = (await post(`${server.url}/v1/decision-machine-1/classify`, classify)).json;
  // The server's slots hold earlier prompts (a cached prefix is read in other batches than a fresh
  // prefill), so the probabilities agree to rounding, not to the last bit.
  t.same(Object.keys(fromFile.json), Object.keys(route), 'the same fields');
  t.equal(fromFile.json.label, route.label);
  t.ok(Math.abs(fromFile.json.probability - route.probability) < 0.01, 'the same probability, to rounding');
  t.equal(fromFile.json.label, 'billing');
});

t.test('an invalid body prints the same envelope as the route, exit 4', async (t) => {
  const body = { text: 'a', labels: ['only one'] };
  const http = await post(`${server.url}/v1/decision-machine-1/classify`, body);
  t.equal(http.status, 400);
  const cli = decide(['classify'], JSON.stringify(body));
  t.equal(cli.status, 4);
  t.same(cli.json, http.json);
  t.equal(cli.json.error.code, 'invalid_request');
  const broken = decide(['yes-no'], '{"text": ');
  t.equal(broken.status, 4);
  t.match(broken.json.error.message, /^body: invalid JSON/);
});

t.test('usage errors: exit 2, nothing on stdout', async (t) => {
  const unknown = decide(['summarise'], '{}');
  t.equal(unknown.status, 2);
  t.equal(unknown.stdout, '');
  t.match(unknown.stderr, /unknown capability "summarise"\nusage: decision-machine decide CAPABILITY/);
  const missing = decide(['yes-no', join(dir, 'absent.json')]);
  t.equal(missing.status, 2);
  t.match(missing.stderr, /cannot read .*absent\.json/);
});
