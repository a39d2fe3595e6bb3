// Label priors: computed once per label set (concurrent requests share the job), recomputed
// after a failure, and divided out of the scores.
import t from 'tap';
import type { ScoreJob, ScoreResult } from '../../src/binding.js';
import type { Session } from '../../src/engine/engine.js';
import type { LabelJobs } from '../../src/decisions/label-jobs.js';
import { calibrated, CONTENT_FREE_TEXT, LabelPriors } from '../../src/decisions/label-priors.js';
import { normalise } from '../../src/decisions/distribution.js';

function sessionScoring(results: () => Promise<number[]>): { session: Session; texts: string[] } {
  const texts: string[] = [];
  const session = {
    score: async (jobs: ScoreJob[]) => {
      texts.push(...jobs.map((j) => (j as unknown as { text: string }).text));
      return [{ logprobs: Float64Array.from(await results()) } as unknown as ScoreResult];
    },
    withoutSignal: () => session,
  } as unknown as Session;
  return { session, texts };
}
const jobs = { job: (text: string) => ({ text }) as unknown as ScoreJob } as unknown as LabelJobs;

t.test('one prior job per label set, shared by concurrent requests', async (t) => {
  const { session, texts } = sessionScoring(async () => [-0.1, -2.5]);
  const priors = new LabelPriors(jobs, 'asked');
  const labels = [{ name: 'positive' }, { name: 'negative' }];
  const [a, b] = await Promise.all([priors.of(session, labels), priors.of(session, labels)]);
  await priors.of(session, labels);
  t.same(a, [-0.1, -2.5]);
  t.equal(a, b);
  t.same(texts, [CONTENT_FREE_TEXT], 'the content-free text was scored once');
  await priors.of(session, [{ name: 'positive', description: 'good' }, { name: 'negative' }]);
  t.equal(texts.length, 2, 'a description makes another label set');
});

t.test('a failed prior is not kept', async (t) => {
  let calls = 0;
  const { session } = sessionScoring(async () => {
    if (++calls === 1) throw new Error('overloaded');
    return [-1, -1];
  });
  const priors = new LabelPriors(jobs, 'asked');
  await t.rejects(priors.of(session, [{ name: 'a' }, { name: 'b' }]), /overloaded/);
  t.same(await priors.of(session, [{ name: 'a' }, { name: 'b' }]), [-1, -1]);
});

t.test('calibration removes the preference the model has without a text', async (t) => {
  // The model likes "negative" (prior 0.9); this text gives it 0.8: after calibration it loses.
  const p = normalise(calibrated([Math.log(0.2), Math.log(0.8)], [Math.log(0.1), Math.log(0.9)]));
  t.ok(p[0]! > p[1]!, `positive ${p[0]!.toFixed(3)} against ${p[1]!.toFixed(3)}`);
  t.ok(Math.abs(p[0]! + p[1]! - 1) < 1e-12, 'probabilities sum to 1');
});
