// 20,000-character texts on the real models: the encoder finds the window that holds the answer,
// and the answer's offsets point into the original text.
import t from 'tap';
import { serviceOf } from '../../src/service.js';
import { openTestEngine } from '../helpers/model.js';
import { decide } from '../helpers/requests.js';

const engine = await openTestEngine({ encoder: true });
t.teardown(() => engine.close());
const s = serviceOf(engine);

// Varied filler about other things, so the needle is not the only sentence with content.
const topics = [
  'The museum extended its opening hours for the summer exhibition of Dutch paintings.',
  'Rainfall in the northern valleys was twice the seasonal average this spring.',
  'The football club announced a new training ground on the edge of the city.',
  'A local bakery won a regional prize for its sourdough bread.',
  'Engineers inspected the old railway bridge and recommended new steel supports.',
  'The library will close for two weeks while the heating system is replaced.',
];
const filler = (n: number) => {
  let out = '';
  for (let i = 0; out.length < n; i++) out += topics[(i * 7) % topics.length] + ' ';
  return out.slice(0, n);
};

t.test('answer finds a fact in the middle of a 20,000-character text', async (t) => {
  const needle = 'The invoice number for the roof repair is INV-48213.';
  const text = `${filler(11000)}${needle} ${filler(20000 - 11001 - needle.length)}`;
  t.equal(text.length, 20000);
  const out = await decide(engine, s.answer, { text, question: 'What is the invoice number for the roof repair?' });
  const r = out.body as { answer: string | null; start: number; end: number };
  t.match(r.answer, /INV-48213/);
  t.equal(text.slice(r.start, r.end), r.answer, 'offsets into the original text');
  // The other windows are far less similar to the question than the needle's: about one window
  // is read, not the whole read budget.
  t.ok(out.inputTokens < 400, `the model read ${out.inputTokens} tokens, not the whole text`);
});

t.test('yes-no on a long text reads the window that decides', async (t) => {
  const text = `${filler(9000)}The board approved the merger with Northwind on Friday. ${filler(9000)}`;
  const out = await decide(engine, s.yesNo, {
    text,
    statements: ['The board approved the merger.', 'The board rejected the merger.'],
  });
  const [yes, no] = (out.body as { results: { answer: boolean }[] }).results;
  t.equal(yes!.answer, true);
  t.equal(no!.answer, false);
});
