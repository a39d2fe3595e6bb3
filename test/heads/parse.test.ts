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

t.test('bad input names its line and field', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /file: no examples/],
    [`${yesNo()}\n{"cap": "yes-no",`, /^line 2: not JSON/],
    [
      JSON.stringify({ cap: 'answer', req: {}, expect: {} }),
      /^line 1: cap: "answer" cannot be fitted \(yes-no, classify, rate\)/,
    ],
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
  const cli = new URL('../../src/cli.js', import.meta.url).pathname;
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
