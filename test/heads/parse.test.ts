// `decision-machine fit FILE` refuses a bad file before any model work, naming the line, and
// stores nothing.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExamples } from '../../src/heads/fit.js';
import { openStore } from '../../src/store/store.js';

const yesNo = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    cap: 'yes-no',
    req: { text: 'It rained.', statement: 'It was wet.' },
    expect: { answer: true },
    ...over,
  });
const classify = (label: string) =>
  JSON.stringify({ cap: 'classify', req: { text: 'Hi', labels: ['greeting', 'farewell'] }, expect: { label } });

t.test('each line is grouped by its decision signature', async (t) => {
  const lines = parseExamples([yesNo(), classify('greeting'), '', classify('farewell')].join('\n'));
  t.same(
    lines.map((l) => [l.line, l.sig.definition.capability, l.outcome]),
    [
      [1, 'yes-no', 1],
      [2, 'classify', 1],
      [4, 'classify', 0],
    ],
  );
  t.same(lines[1]!.sig.outcomes, ['farewell', 'greeting'], "a label set's outcomes are its names in order");
  t.equal(lines[1]!.sig.id, lines[2]!.sig.id, 'one label set, one signature');
  const reordered = parseExamples(
    JSON.stringify({
      cap: 'classify',
      req: { text: 'Hi', labels: ['farewell', 'greeting'] },
      expect: { label: 'greeting' },
    }),
  );
  t.equal(reordered[0]!.sig.id, lines[1]!.sig.id, 'the labels in another order are the same signature');
});

const TREE = {
  order: { description: 'orders', labels: { damaged: 'broken on arrival', late: 'not arrived yet' } },
  account: { description: 'the account', labels: { login: 'cannot sign in' } },
  other: 'anything else',
};
const tree = (path: unknown, text = 'The box was crushed.') =>
  JSON.stringify({ cap: 'classify-tree', req: { text, tree: TREE }, expect: { path } });
const verify = (matches: unknown, value: string | number = '1 September 2025', description?: string) =>
  JSON.stringify({
    cap: 'verify',
    req: { text: 'The lease starts on 1 September 2025.', field: { name: 'start date', description }, value },
    expect: { matches },
  });

t.test('verify lines: the field is the decision, the value is read with each text', async (t) => {
  const lines = parseExamples([verify(true), verify(false, 1200), verify(true, 'x', 'when it begins')].join('\n'));
  t.same(
    lines.map((l) => [l.sig.definition.capability, l.value, l.outcome]),
    [
      ['verify', '1 September 2025', 1],
      ['verify', '1200', 0],
      ['verify', 'x', 1],
    ],
  );
  t.same(lines[0]!.sig.outcomes, ['false', 'true']);
  t.equal(lines[0]!.sig.id, lines[1]!.sig.id, 'another value asks the same decision');
  t.not(lines[0]!.sig.id, lines[2]!.sig.id, "the field's description is part of the decision");
});

t.test('classify-tree lines: one decision over the leaf paths', async (t) => {
  const lines = parseExamples([tree(['order', 'late']), tree(['other']), tree(['account', 'login'])].join('\n'));
  const { outcomes } = lines[0]!.sig;
  t.same(
    outcomes.map((o) => JSON.parse(o)),
    [['account', 'login'], ['order', 'damaged'], ['order', 'late'], ['other']],
  );
  t.same(
    lines.map((l) => outcomes[l.outcome]),
    ['["order","late"]', '["other"]', '["account","login"]'],
  );
});

t.test('bad input names its line and field', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /file: no examples/],
    [`${yesNo()}\n{"cap": "yes-no",`, /^line 2: not JSON/],
    [
      JSON.stringify({ cap: 'answer', req: {}, expect: {} }),
      /^line 1: cap: "answer" cannot be fitted \(yes-no, classify, classify-tree, rate, verify\)/,
    ],
    [verify('yes'), /^line 1: expect.matches: true or false/],
    [
      JSON.stringify({ cap: 'verify', req: { text: 'x', field: { name: 'a' } }, expect: { matches: true } }),
      /^line 1: req: .*value/,
    ],
    [`${tree(['order', 'late'])}\n${tree('order')}`, /^line 2: expect.path: a list of labels from the top/],
    [tree(['order']), /^line 1: expect.path: ends at "order", which has labels under it \(a path runs to a leaf\)/],
    [tree(['order', 'lost']), /^line 1: expect.path: "lost" is not a label under "order"/],
    [tree(['shipping']), /^line 1: expect.path: "shipping" is not a label under the top of req.tree/],
    [tree(['other', 'more']), /^line 1: expect.path: "other" is a leaf; the path ends there/],
    [classify('weather'), /^line 1: expect.label: "weather" is not one of req.labels/],
    [yesNo({ expect: { answer: 'yes' } }), /^line 1: expect.answer: true or false/],
    [yesNo({ req: { text: 'x' } }), /^line 1: req.statement: one statement per line/],
    [yesNo({ req: { text: 'x', statement: 'y', extra: 1 } }), /^line 1: req: .*extra/],
    [
      JSON.stringify({ cap: 'rate', req: { text: 'x', scale: ['low', 'high'] }, expect: { level: 2 } }),
      /^line 1: expect.level: an integer from 0 to 1/,
    ],
  ];
  for (const [content, message] of cases)
    t.throws(() => parseExamples(content), { code: 'invalid_request', message }, message.source);
});

t.test('the CLI refuses a bad file with exit 4 and stores nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-fit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'labels.jsonl');
  writeFileSync(file, `${classify('greeting')}\n${classify('weather')}\n`);
  const database = join(dir, 'service.db');
  const cli = new URL('../../src/cli/main.js', import.meta.url).pathname;
  const run = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
    execFile('node', [cli, 'fit', file], { env: { ...process.env, DM_DATABASE_URL: database } }, (err, _out, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, stderr }),
    ),
  );
  t.equal(run.code, 4);
  t.match(run.stderr, /line 2: expect.label: "weather" is not one of req.labels; nothing stored/);
  const store = await openStore(database);
  t.same(await store.listHeads(), []);
  await store.close();
});
