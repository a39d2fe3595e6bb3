// Long texts read in windows: the windows cover the text, excerpts map offsets back exactly, and
// span answers on a windowed text point into the original text.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { serviceOf } from '../../src/service.js';
import { Excerpt, Reader, READ_CHARS, WHOLE_TEXT_CHARS, windowsOf } from '../../src/decisions/windows.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { SMALL } from '../helpers/server.js';
import { decide } from '../helpers/requests.js';

const filler = (n: number) =>
  'The committee met again on Tuesday and nothing much was decided. '.repeat(Math.ceil(n / 65)).slice(0, n);

t.test('windows cover the text in order, end at sentence ends, never split a surrogate pair', async (t) => {
  const text = filler(5000) + '😀'.repeat(300);
  const windows = windowsOf(text);
  t.equal(windows[0]![0], 0);
  t.equal(windows.at(-1)![1], text.length);
  windows.forEach(([from, to], i) => {
    t.ok(to - from <= 400 && to > from);
    if (i > 0) t.equal(from, windows[i - 1]![1]);
    t.notMatch(text.charAt(to - 1), /[\uD800-\uDBFF]/);
  });
  t.ok(
    windows.slice(0, 5).every(([, to]) => text.charAt(to - 2) === '.'),
    'cut after a full stop',
  );
});

t.test('an excerpt maps its offsets back to the original; gaps map to null', async (t) => {
  const text = Array.from({ length: 100 }, (_, i) => String.fromCharCode(0x100 + i)).join('');
  const e = new Excerpt(text, [
    [10, 20],
    [50, 60],
  ]);
  t.ok(e.windowed);
  const second = e.text.indexOf(text.slice(50, 60));
  t.ok(second > 10);
  t.same(e.toOriginal(second + 2, second + 5), [52, 55]);
  t.equal(e.toOriginal(5, second + 2), null, 'a range across the gap has no original');
  t.notOk(Excerpt.whole(text).windowed);
});

const engine = await Engine.open({ ...SMALL, modelPath: 'fake', encoderPath: 'fake' }, fakeBinding());
t.teardown(() => engine.close());

t.test('short texts are read whole; long ones down to the read budget, best windows first', async (t) => {
  const reader = new Reader(engine);
  const short = filler(WHOLE_TEXT_CHARS);
  const session = engine.admit();
  t.teardown(() => session.close());
  t.equal((await reader.focus(session, short, ['committee'])).text, short);
  const needle = 'Zebra quizzes vex wizard jazz kings.';
  const long = `${filler(9000)} ${needle} ${filler(9000)}`;
  const read = await reader.focus(session, long, [needle]);
  t.ok(read.text.length <= READ_CHARS + 200, `read ${read.text.length} characters`);
  t.match(read.text, needle);
  const sample = reader.sample(long);
  t.ok(
    sample.text.startsWith(long.slice(0, 100)) && sample.text.endsWith(long.slice(-50)),
    'a sample spans start to end',
  );
});

t.test('an answer from a windowed text carries offsets into the original text', async (t) => {
  const s = serviceOf(engine);
  const text = `${filler(12000)} Zebra quizzes vex wizard jazz kings. ${filler(6000)}`;
  const out = await decide(engine, s.answer, { text, question: 'Zebra quizzes vex wizard jazz kings?' });
  const r = out.body as { answer: string; start: number; end: number };
  t.type(r.answer, 'string');
  t.equal(text.slice(r.start, r.end), r.answer);
  t.ok(
    out.inputTokens < text.length / 4,
    `the model read ${out.inputTokens} tokens of a ${text.length}-character text`,
  );
});
