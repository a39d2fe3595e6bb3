// What Source.span gives back for any run of tokens a span job may return: a value's words, never
// a bracket left open, and an abbreviation's last period kept.
import t from 'tap';
import { Source } from '../../src/decisions/source.js';
import { Excerpt } from '../../src/decisions/windows.js';
import { openTestEngine } from '../helpers/model.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());

const text = 'Ticket 4411 went to Amara Nwosu (Finance team), cc Baltic Freight Sp. z o.o. and U.S. Steel.';
const source = new Source(engine, Excerpt.whole(text));
const n = source.tokens.length;
const spans = Array.from({ length: n }, (_, start) =>
  Array.from({ length: n - start }, (_, k) => source.span(start, start + k + 1) ?? []).flat(),
).flat();

t.test('every span is the text at its offsets, with no bracket left open', async (t) => {
  t.ok(spans.length > 100);
  t.same(
    spans.filter((s) => text.slice(s.start, s.end) !== s.text),
    [],
    'text.slice(start, end) is the span',
  );
  t.same(
    spans.filter((s) => s.text.lastIndexOf('(') > s.text.lastIndexOf(')')),
    [],
    'no span ends inside a bracket',
  );
});

t.test("an abbreviation keeps its last period when copied, a sentence's end does not", async (t) => {
  t.ok(spans.some((s) => s.text === 'Baltic Freight Sp. z o.o.'));
  t.ok(spans.some((s) => s.text === 'U.S. Steel'));
  t.notOk(spans.some((s) => s.text.endsWith('Steel.')));
});
