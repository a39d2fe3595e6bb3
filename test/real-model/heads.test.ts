// Fitted heads on the real model: a deployment whose labels mean something other than the model
// reads in their names ("red" for texts about the sea, "blue" for texts about fire) fits a head
// on 8 examples of each; the route then decides its way, names the head in x-decision-head, and
// `GET /` lists it. A head fitted on another model's sha256 is refused with a message naming it.
// The same deployment checks a "desk" field (verify: the marine desk for texts about the sea) and
// files texts in a tree whose red and blue teams mean the same; `decision-machine decide` applies
// the store's heads as the server does.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';
import { openStore } from '../../src/store/store.js';
import { fitHeads, parseExamples } from '../../src/heads/fit.js';
import { Heads } from '../../src/heads/heads.js';
import { modelSha256 } from '../../src/models/identity.js';
import { loadConfig } from '../../src/config.js';
import { cliEnv, testModelPath } from '../helpers/model.js';
import type { VerifyResult } from '../../src/decisions/verify.js';
import type { ClassifyTreeResult } from '../../src/decisions/classify-tree.js';
import { FIRE, SEA } from '../helpers/sea-fire.js';
import { decide } from '../helpers/requests.js';

// A head reads one job per example (the decision's own reading), so the fits take minutes on 2 cores.
t.setTimeout(1_200_000);

const LABELS = ['red', 'blue'];
const MODEL = 'a'.repeat(64);

const line = (text: string, label: string) =>
  JSON.stringify({ cap: 'classify', req: { text, labels: LABELS }, expect: { label } });
const MARINE = 'Route this report to the marine desk.';
const desk = (text: string, answer: boolean) =>
  JSON.stringify({ cap: 'yes-no', req: { text, statement: MARINE }, expect: { answer } });
const FIELD = { name: 'desk', description: 'the newsroom desk the report goes to' };
const checked = (text: string, matches: boolean) =>
  JSON.stringify({ cap: 'verify', req: { text, field: FIELD, value: 'marine' }, expect: { matches } });
// Top-level names in one order here, another in requests: the same tree.
const TREE = {
  team: { description: 'a team of the newsroom', labels: { red: 'the red team', blue: 'the blue team' } },
  none: 'no team',
};
const filed = (text: string, team: string) =>
  JSON.stringify({ cap: 'classify-tree', req: { text, tree: TREE }, expect: { path: ['team', team] } });
const train = [
  ...SEA.slice(0, 8).map((s) => line(s, 'red')),
  ...FIRE.slice(0, 8).map((s) => line(s, 'blue')),
  ...SEA.slice(0, 8).map((s) => desk(s, true)),
  ...FIRE.slice(0, 8).map((s) => desk(s, false)),
  ...SEA.slice(0, 8).map((s) => checked(s, true)),
  ...FIRE.slice(0, 8).map((s) => checked(s, false)),
  ...SEA.slice(0, 8).map((s) => filed(s, 'red')),
  ...FIRE.slice(0, 8).map((s) => filed(s, 'blue')),
].join('\n');
const HELD_OUT = [
  [SEA[8]!, true],
  [SEA[9]!, true],
  [FIRE[8]!, false],
  [FIRE[9]!, false],
] as const;

const engine = await Engine.open({
  modelPath: await testModelPath(),
  slots: 1,
  threads: 2,
  queue: 4,
  contextSize: 2048,
  batchSize: 256,
  promptCacheMiB: 64,
});
t.teardown(() => engine.close());
const dir = mkdtempSync(join(tmpdir(), 'dm-heads-'));
const store = await openStore(join(dir, 'heads.db'));
t.teardown(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const reports = await fitHeads(engine, parseExamples(train), { store, model: MODEL });
const warnings: string[] = [];
const heads = await Heads.open(store, MODEL, engine.hiddenSize, (m) => warnings.push(m));
t.teardown(() => heads.close());
const headed = await serve(routes(serviceOf(engine, heads)), {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 64 * 1024,
  log: createLogger('silent'),
});
t.teardown(() => headed.close());
const url = `http://127.0.0.1:${headed.port}`;

const classify = async (text: string) => {
  const res = await fetch(`${url}/v1/decision-machine-1/classify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, labels: LABELS }),
  });
  return {
    head: res.headers.get('x-decision-head'),
    body: (await res.json()) as { label: string; scores: Record<string, number> },
  };
};

t.test('fit reports and stores one head per decision', async (t) => {
  t.same(
    reports.map((r) => [r.capability, r.examples]),
    [
      ['classify', 16],
      ['yes-no', 16],
      ['verify', 16],
      ['classify-tree', 16],
    ],
  );
  for (const r of reports) {
    t.comment(
      `${r.capability}: cross-validated ${r.zeroShot} zero-shot, ${r.fitted} fitted; route ${r.route} of ${r.routeExamples}`,
    );
  }
  for (const r of [reports[2]!, reports[3]!]) t.equal(r.stored, true, `${r.capability}: ${r.note}`);
  const [r] = reports;
  t.equal(r!.stored, true, r!.note);
  t.ok(r!.fitted! > r!.zeroShot!, `cross-validated: fitted ${r!.fitted} over zero-shot ${r!.zeroShot}`);
  // Checked against the route itself, which reads these labels by their names and gets them wrong.
  t.ok(r!.routeExamples > 0 && r!.route! < r!.fitted!, `the route was asked: ${r!.route} of ${r!.routeExamples}`);
  const stored = reports.filter((x) => x.stored).map((x) => x.id);
  t.same((await store.listHeads()).map((h) => h.id).sort(), stored.sort());
});

t.test('a yes-no statement with a head is decided by it, beside one without', async (t) => {
  const yes = reports[1]!;
  const res = await fetch(`${url}/v1/decision-machine-1/yes-no`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ texts: [SEA[9], FIRE[9]], statements: [MARINE, 'Something is burning.'] }),
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as { results: { results: { statement: string; answer: boolean }[] }[] };
  t.same(
    body.results.map((r) => r.results.map((x) => x.statement)),
    [
      [MARINE, 'Something is burning.'],
      [MARINE, 'Something is burning.'],
    ],
  );
  t.same(
    body.results.map((r) => r.results[0]!.answer),
    [true, false],
  );
  t.same(
    body.results.map((r) => r.results[1]!.answer),
    [false, true],
    'the statement without a head is read zero-shot',
  );
  t.equal(res.headers.get('x-decision-head'), yes.stored ? yes.id : null);
});

t.test('the route decides held-out texts the deployment way and names the head', async (t) => {
  const zeroShot = serviceOf(engine).classify;
  for (const [text, want] of [
    [SEA[8]!, 'red'],
    [SEA[9]!, 'red'],
    [FIRE[8]!, 'blue'],
    [FIRE[9]!, 'blue'],
  ] as const) {
    const r = await classify(text);
    t.equal(r.body.label, want, text);
    t.equal(r.head, reports[0]!.id);
    t.same(Object.keys(r.body.scores), LABELS, 'the response keeps its shape and label order');
  }
  // The zero-shot reading takes the names at their word somewhere among these.
  const wrong = await Promise.all(
    [SEA[8]!, SEA[9]!, FIRE[8]!, FIRE[9]!].map(async (text, i) => {
      const r = (await decide(engine, zeroShot, { text, labels: LABELS })).body as { label: string };
      return r.label !== (i < 2 ? 'red' : 'blue');
    }),
  );
  t.ok(wrong.some(Boolean), 'zero-shot gets at least one of them wrong');
});

t.test('a System One choice question over the same options is answered by the same head', async (t) => {
  const res = await fetch(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'jev-latest',
      state: FIRE[9],
      questions: {
        colour: { type: 'choice', criteria: { red: null, blue: null } },
        plain: { type: 'noul', instructions: 'Something is burning.' },
      },
    }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-decision-head'), reports[0]!.id);
  const { answers } = (await res.json()) as { answers: { colour: { choice: string }; plain: { noul: number } } };
  t.equal(answers.colour.choice, 'blue');
  t.ok(answers.plain.noul > 0.5, 'a question without a head is read zero-shot beside it');
});

t.test('a request with another label set is not decided by the head', async (t) => {
  const res = await fetch(`${url}/v1/decision-machine-1/classify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: SEA[8], labels: ['red', 'blue', 'green'] }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-decision-head'), null);
});

t.test('GET / lists the heads in use', async (t) => {
  const root = (await (await fetch(`${url}/`)).json()) as { heads: { id: string; examples: number }[] };
  t.same(
    root.heads.find((h) => h.id === reports[0]!.id),
    { id: reports[0]!.id, capability: 'classify', examples: 16 },
  );
});

t.test('a head fitted on another model is refused with a message naming it', async (t) => {
  const other: string[] = [];
  const elsewhere = await Heads.open(store, 'b'.repeat(64), engine.hiddenSize, (m) => other.push(m));
  elsewhere.close();
  t.same(elsewhere.list(), []);
  t.match(other.join('\n'), new RegExp(`head ${reports[0]!.id} was fitted on model sha256 aaaaaaaaaaaa.*refit it`));
  t.same(warnings, [], 'the right model loads it without a word');
});

const post = async <T>(path: string, body: unknown) => {
  const res = await fetch(`${url}/v1/decision-machine-1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, head: res.headers.get('x-decision-head'), body: (await res.json()) as T };
};

t.test("verify of the field with a head: the head decides matches, the route's reading finds", async (t) => {
  const texts = HELD_OUT.map(([text]) => text);
  const r = await post<{ results: VerifyResult[] }>('verify', { texts, field: FIELD, value: 'marine' });
  t.equal(r.status, 200);
  t.equal(r.head, reports[2]!.id);
  t.same(
    r.body.results.map((x) => x.matches),
    HELD_OUT.map(([, want]) => want),
  );
  for (const x of r.body.results) {
    t.same(Object.keys(x), ['matches', 'probability', 'found'], 'the response keeps its shape');
    t.equal(x.matches, x.probability >= 0.5);
  }
  const zeroShot = (await decide(engine, serviceOf(engine).verify, { texts, field: FIELD, value: 'marine' })).body as {
    results: { matches: boolean }[];
  };
  t.ok(
    zeroShot.results.some((x, i) => x.matches !== HELD_OUT[i]![1]),
    'zero-shot gets at least one of them wrong (the texts name no desk)',
  );
  const other = await post('verify', { text: SEA[9], field: { name: 'desk' }, value: 'marine' });
  t.equal(other.head, null, 'another field (no description) is read zero-shot');
});

t.test('classify-tree with a head: one reading of the tree, the levels rebuilt from it', async (t) => {
  const tree = {
    none: TREE.none,
    team: { labels: { blue: 'the blue team', red: 'the red team' }, description: TREE.team.description },
  };
  for (const [text, sea] of HELD_OUT) {
    const r = await post<ClassifyTreeResult>('classify-tree', { text, tree });
    t.equal(r.status, 200);
    t.equal(r.head, reports[3]!.id, 'the same tree listed in another order');
    const want = sea ? 'red' : 'blue';
    t.same(r.body.path, ['team', want], text);
    t.equal(r.body.label, want);
    t.same(Object.keys(r.body), ['path', 'label', 'probability', 'confidence', 'levels']);
    const [top, team] = r.body.levels;
    t.same(Object.keys(top.scores), ['none', 'team'], "each level's scores in the request's order");
    t.same(Object.keys(team.scores), ['blue', 'red']);
    t.ok(Math.abs(r.body.probability - top.probability * team.probability) < 1e-9);
    t.ok(top.input_tokens > 0 && top.input_chars > text.length, 'the one reading is billed on the first level');
    t.same([team.input_chars, team.input_tokens, team.inference_ms], [0, 0, 0]);
  }
  const zeroShot = await Promise.all(
    HELD_OUT.map(
      async ([text]) =>
        (await decide(engine, serviceOf(engine).classifyTree, { text, tree })).body as { path: string[] },
    ),
  );
  t.ok(
    zeroShot.some((x, i) => x.path.join('/') !== `team/${HELD_OUT[i]![1] ? 'red' : 'blue'}`),
    'zero-shot files at least one of them elsewhere',
  );
});

t.test('GET / lists the verify and tree heads too', async (t) => {
  const root = (await (await fetch(`${url}/`)).json()) as { heads: { id: string; capability: string }[] };
  t.same(
    [reports[2]!.id, reports[3]!.id].map((id) => root.heads.find((h) => h.id === id)?.capability),
    ['verify', 'classify-tree'],
  );
});

t.test('decision-machine decide applies the heads of its store', async (t) => {
  // The store of this test's heads, recorded under the model file's own sha256, as `fit` does.
  const model = await modelSha256({ model: loadConfig().model, modelPath: await testModelPath() });
  const database = join(dir, 'decide.db');
  const own = await openStore(database);
  const head = (await store.findHead(reports[0]!.id))!;
  await own.saveHead({ ...head, model });
  await own.close();
  const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
  const run = spawnSync('node', [cli, 'decide', 'classify'], {
    env: await cliEnv(database),
    input: JSON.stringify({ text: SEA[9], labels: LABELS }),
    encoding: 'utf8',
    timeout: 300_000,
  });
  t.equal(run.status, 0, run.stderr);
  t.equal(JSON.parse(run.stdout).label, 'red');
  t.match(run.stderr, `x-decision-head: ${reports[0]!.id}`);
});
