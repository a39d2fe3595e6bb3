// The span kernel feeds the source tokens a copy would go on with in the same decode as its next
// token and takes back those the model does not choose. A copied span must still be exactly what
// one token per step reads: its probability is the model's probability of writing those tokens.
import t from 'tap';
import { Prompt } from '../../src/decisions/prompt.js';
import { Source } from '../../src/decisions/source.js';
import { Excerpt } from '../../src/decisions/windows.js';
import { openTestEngine } from '../helpers/model.js';
import { scoreRound, spanRound } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());

t.test('long copied values have the probability the model gives their tokens', async (t) => {
  const text =
    'Delivery note 4471. Ship to: Unit 12, Harbour Trade Park, 88 Wexford Quay Road, Dun Laoghaire, ' +
    'County Dublin A96 K2X4, Ireland. Contact: Siobhan Mac Giolla Phadraig, +353 1 284 7716. ' +
    'Reference: PO-2024-118-ALPHA-7. Two pallets of ceramic floor tiles.';
  const prompt = new Prompt(engine, 'Copy the value of the field from the text.');
  const source = new Source(engine, Excerpt.whole(text));
  const fields = ['delivery address', 'contact phone', 'purchase order reference', 'contact name'];
  const prefix = prompt.prefix(`Text: ${text}\n\n`);
  const branches = fields.map((f) => prompt.branch(`Field: ${f}`));
  const [copied] = await spanRound(engine, [source.job(prefix, branches, { maxSpanTokens: 64 })]);
  const spans = fields.map((_, b) => copied!.spans[b]![0]!);
  t.ok(
    spans.some((s) => s.end - s.start >= 12),
    'one value is long enough to be copied over several drafted decodes',
  );
  // The model writes a value as it begins an answer (no leading space): the text of the span, tokenized.
  const written = spans.map((s) => prompt.option(source.span(s.start, s.end)!.text));
  const scored = await scoreRound(
    engine,
    spans.map((_, b) => ({ prefix, branches: [branches[b]!], options: [written[b]!] })),
  );
  fields.forEach((field, b) => {
    const s = spans[b]!;
    t.ok(source.span(s.start, s.end), `${field}: ${source.span(s.start, s.end)?.text}`);
    const logprob = scored[b]!.logprobs[0]!;
    t.ok(
      Math.abs(s.logprob - s.closeLogprob - logprob) < 0.1,
      `${field}: copied ${(s.logprob - s.closeLogprob).toFixed(3)}, scored ${logprob.toFixed(3)}`,
    );
  });
});

t.test('a list is copied as if each value were written one token at a time', async (t) => {
  // A span ends where the model writes a line break instead of the drafted next word: that word
  // must leave the cache, or the next name would be read after it.
  const text =
    'The lease was signed by Dermot Fitzgerald-Whitcombe of Killarney and witnessed by Aoife Ni Bhraonain, ' +
    'solicitor, with Cornelius van der Westhuizen present for the landlord.';
  const prompt = new Prompt(engine, 'List every person the text names, copying each name exactly, one per line.');
  const source = new Source(engine, Excerpt.whole(text));
  const prefix = prompt.prefix(`Text: ${text}\n\n`);
  const branch = prompt.branch('People:');
  const newline = prompt.option('\n')[0]!;
  const [copied] = await spanRound(engine, [source.job(prefix, [branch], { separator: newline, maxSpans: 4 })]);
  const spans = copied!.spans[0]!;
  const names = spans.map((s) => source.span(s.start, s.end)!.text);
  t.ok(names.length >= 2, `several names: ${names.join(' | ')}`);
  t.ok(names.includes('Aoife Ni Bhraonain'), 'a name after the first is copied whole');
  // Every name closed by the line break the next one follows, and the last one's own tokens. Within
  // a nat: a list's closing tokens are weighed as one choice, and a decode of 16 tokens rounds
  // differently from one of 1; a name read after a stale drafted word is off by far more, or fails.
  const logprob = spans.reduce((sum, s, i) => sum + s.logprob - (i === spans.length - 1 ? s.closeLogprob : 0), 0);
  const [scored] = await scoreRound(engine, [
    { prefix, branches: [branch], options: [prompt.option(names.join('\n'))] },
  ]);
  t.ok(
    Math.abs(logprob - scored!.logprobs[0]!) < 1,
    `copied ${logprob.toFixed(3)}, scored ${scored!.logprobs[0]!.toFixed(3)}`,
  );
});
