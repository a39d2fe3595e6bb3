// classify-tree on the real models: top labels that say little ("utility", "meta") are chosen by
// what lies under them, through the sentence encoder.
import t from 'tap';
import { serviceOf } from '../../src/service.js';
import { openTestEngine } from '../helpers/model.js';
import { decide } from '../helpers/requests.js';

const engine = await openTestEngine({ encoder: true });
t.teardown(() => engine.close());
const s = serviceOf(engine);

// The model alone (no encoder) sends three of these five to small_talk or to work > pto_request.
const tree = {
  utility: { labels: { timer: 'timer', weather: 'weather', calculator: 'calculator', alarm: 'alarm' } },
  meta: {
    labels: { change_language: 'change language', reset_settings: 'reset settings', change_volume: 'change volume' },
  },
  small_talk: { labels: { tell_joke: 'tell joke', greeting: 'greeting', goodbye: 'goodbye' } },
  work: { labels: { pto_request: 'pto request', schedule_meeting: 'schedule meeting', payday: 'payday' } },
};

t.test('classify-tree: vague top labels are chosen by the labels under them', async (t) => {
  const cases: [string, string[]][] = [
    ['can you start a countdown for ten minutes', ['utility', 'timer']],
    ['will it rain tomorrow afternoon', ['utility', 'weather']],
    ['put everything back to the factory defaults', ['meta', 'reset_settings']],
    ['when do i get my next paycheck', ['work', 'payday']],
    ['i would like to take friday off', ['work', 'pto_request']],
  ];
  const out = await decide(engine, s.classifyTree, { texts: cases.map(([text]) => text), tree });
  const results = (out.body as { results: { path: string[]; probability: number }[] }).results;
  t.same(
    results.map((r) => r.path),
    cases.map(([, path]) => path),
  );
  t.ok(results.every((r) => r.probability > 0.5));
});
