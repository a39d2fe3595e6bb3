// The sweep's requests, over the real HTTP stack on the fake binding: every workload's body, single
// and batch, is one the route accepts, and the decisions the sweep counts for it are the answers
// the route returns (entities: one search per type, whatever it finds). The seeded texts repeat
// with their seed and differ from each other from the first word on.
import t from 'tap';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';
import { decisionsOf, requestBody, routeOf, WORKLOADS, type Workload } from '../../src/bench/workloads.js';
import { TextGenerator } from '../../src/bench/texts.js';

// The fake binding reads a character as a token: a context twice the default keeps a batch of three
// tree classifications (each level re-reads the text under the shared reading's instructions) under
// the request's token budget, as the real tokenizer does with room to spare.
const server = await startServer(fakeBinding(), { modelPath: 'fake', contextSize: 8192 }, 1024 * 1024);
t.teardown(server.close);

/** The answers in a route's 200 body. */
function answers(workload: Workload, json: any): number {
  const each = (one: any): number => {
    if (Array.isArray(one.results)) return one.results.reduce((s: number, r: any) => s + each(r), 0);
    if (workload === 'extract') return Object.keys(one.data).length;
    if (workload === 'systemone') return Object.keys(one.answers).length;
    if (workload === 'chat') return one.choices[0].message.tool_calls.length;
    return 1;
  };
  return each(json);
}

for (const workload of WORKLOADS)
  for (const batch of workload === 'chat' ? [1] : [1, 3])
    t.test(`${workload}, ${batch} text(s): accepted, decisions = answers`, async (t) => {
      const texts = new TextGenerator(7);
      const body = requestBody(
        workload,
        Array.from({ length: batch }, () => texts.next(200)),
        { batch, questions: 4, labels: 3 },
      );
      const res = await post(`${server.url}${routeOf(workload, batch)}`, body);
      t.equal(res.status, 200, res.text);
      const asked = decisionsOf(workload, body);
      if (workload === 'entities') t.equal(asked, batch * 4, 'texts x types');
      else t.equal(asked, answers(workload, res.json), 'one decision per answer returned');
      t.ok(Number(res.headers.get('x-input-tokens')) > 0, 'x-input-tokens');
    });

t.test('seeded texts: the same for a seed, of the length asked, all different', async (t) => {
  const a = new TextGenerator(1);
  const b = new TextGenerator(1);
  const texts = Array.from({ length: 200 }, () => a.next(300));
  t.same(
    texts.slice(0, 5),
    Array.from({ length: 5 }, () => b.next(300)),
  );
  t.ok(
    texts.every((x) => x.length > 150 && x.length <= 300),
    'at most the characters asked, cut at a word',
  );
  t.equal(new Set(texts).size, texts.length, 'no text twice');
  t.not(new TextGenerator(2).next(300), texts[0], 'another seed, other texts');
});
