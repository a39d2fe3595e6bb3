// The span kernel's fork (SpanJob.forkWithin): a rival first token close behind the greedy one is
// followed to the end of its span, and replaces the greedy span only when likelier whole and per token.
import t from 'tap';
import { Prompt } from '../../src/decisions/prompt.js';
import { Source } from '../../src/decisions/source.js';
import { Excerpt } from '../../src/decisions/windows.js';
import { openTestEngine } from '../helpers/model.js';
import { spanRound } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());

t.test('a fork answers with the greedy copy or one likelier both whole and per token', async (t) => {
  // A receipt's top lines: the greedy first token of "company" starts "SDN BHD", halfway into a name.
  const text =
    'TAN WOON YANN\nBOOK TA .K(TAMAN DAYA) SDN BHD\n789417-W\nNO.5: 55,57 & 59, JALAN SAGU 18,\nTAMAN DAYA,\n' +
    '81100 JOHOR BAHRU,\nJOHOR.\nDATE: 25/12/2018 8:13:39 PM\nTOTAL: 9.00';
  const prompt = new Prompt(engine, 'Copy the value of the field from the text.');
  const source = new Source(engine, Excerpt.whole(text));
  const fields = ['company', 'date', 'address', 'total'];
  const job = (forkWithin: number) =>
    source.job(
      prompt.prefix(`Text: ${text}\n\n`),
      fields.map((f) => prompt.branch(`Field: ${f}`)),
      { maxSpanTokens: 64, forkWithin },
    );
  const [greedy, forked] = await spanRound(engine, [job(0), job(Math.log(1e6))]);
  const perToken = (s: { logprob: number; start: number; end: number }) => s.logprob / (s.end - s.start + 1);
  fields.forEach((field, b) => {
    const [g, f] = [greedy!.spans[b]![0]!, forked!.spans[b]![0]!];
    t.ok(source.span(f.start, f.end), `${field}: the answer is a span of the text`);
    const same = f.start === g.start && f.end === g.end;
    t.ok(same || (f.logprob > g.logprob && perToken(f) > perToken(g)), `${field}: greedy, or likelier on both counts`);
  });
});
