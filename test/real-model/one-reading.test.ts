// One decision, one reading, on the real model: a System One noul, choice and score return the
// probabilities that yes-no, classify and rate give for the same question about the same text
// (to 1e-9), with the shipped rate readout loaded as the service loads it; the wire's extra
// fields are computed from those probabilities.
import t, { type Test } from 'tap';
import { Classify } from '../../src/decisions/classify.js';
import { OptionReadout } from '../../src/decisions/option-readout.js';
import { RATE_READING_VERSION, RATE_READOUT_FILE } from '../../src/decisions/rate.js';
import { choiceConfidence, scoreConfidence, type SystemOne } from '../../src/decisions/systemone.js';
import { loadConfig } from '../../src/config.js';
import { modelSha256 } from '../../src/models/identity.js';
import { serviceOf } from '../../src/service.js';
import type { ClassifyResult, RateResult, YesNoResult } from '../../src/index.js';
import { openTestEngine, testModelPath } from '../helpers/model.js';
import { decide } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());
const path = await testModelPath();
const rateReadout = await OptionReadout.forModel(
  () => modelSha256({ ...loadConfig(), modelPath: path }),
  RATE_READOUT_FILE,
  RATE_READING_VERSION,
);
const s = serviceOf(engine, undefined, undefined, rateReadout);

const TEXTS = [
  'I was charged twice for my March invoice and nobody answers my emails.',
  'I have already cancelled my subscription, effective today.',
  'Everything works great, thanks!',
];
const TEAMS = {
  billing: 'payments, invoices, refunds',
  engineering: 'bugs and outages',
  retention: 'customers who want to leave',
  success: 'questions and onboarding',
};
const CHURN = ['no risk', 'low risk', 'some risk', 'high risk', 'already leaving'];
const QUESTIONS = {
  payment: {
    type: 'noul' as const,
    instructions: 'Does the customer report a payment problem?',
    criteria: { true: 'a charge, invoice or refund is wrong' },
  },
  team: { type: 'choice' as const, criteria: TEAMS },
  churn: { type: 'score' as const, criteria: CHURN },
};
const close = (t: Test, a: number, b: number, what: string) => t.ok(Math.abs(a - b) <= 1e-9, `${what}: ${a} vs ${b}`);

/** System One asked `questions` of `texts` as one admitted request. */
async function systemOne(texts: string[], questions: Parameters<SystemOne['run']>[1]) {
  const session = engine.admit();
  try {
    return await s.systemOne.run(texts, questions, session);
  } finally {
    session.close();
  }
}

const answers = (await systemOne(TEXTS, QUESTIONS)).body;

t.test('a noul is yes-no asked the same, its criteria as when_true', async (t) => {
  const out = await decide(engine, s.yesNo, {
    texts: TEXTS,
    statement: QUESTIONS.payment.instructions,
    when_true: QUESTIONS.payment.criteria.true,
  });
  const typed = (out.body as { results: YesNoResult[] }).results;
  typed.forEach((r, i) => {
    const a = answers[i]!.payment as { noul: number };
    close(t, a.noul, r.probability, `text ${i}`);
  });
});

t.test('a choice is classify with the options as labels, descriptions included', async (t) => {
  const out = await decide(engine, s.classify, { texts: TEXTS, labels: TEAMS });
  const typed = (out.body as { results: ClassifyResult[] }).results;
  typed.forEach((r, i) => {
    const a = answers[i]!.team as { choice: string; confidence: number; probabilities: Record<string, number> };
    t.equal(a.choice, r.label, `text ${i}: the same label`);
    for (const name of Object.keys(TEAMS)) close(t, a.probabilities[name]!, r.scores[name]!, `text ${i} ${name}`);
    close(t, a.confidence, choiceConfidence(Object.values(r.scores)), `text ${i} confidence, as the wire defines it`);
  });
});

t.test('a score is rate with the levels as the scale', async (t) => {
  const out = await decide(engine, s.rate, { texts: TEXTS, scale: CHURN });
  const typed = (out.body as { results: RateResult[] }).results;
  typed.forEach((r, i) => {
    const a = answers[i]!.churn as { score: number; confidence: number; probabilities: Record<string, number> };
    r.scores.forEach((p, k) => close(t, a.probabilities[String(k)]!, p, `text ${i} level ${k}`));
    close(t, a.score, r.score, `text ${i} expected level`);
    close(t, a.confidence, scoreConfidence(r.scores, r.level), `text ${i} confidence, as the wire defines it`);
  });
});

t.test('instructions are the decision question: the library reads them as System One does', async (t) => {
  const question = 'Which team should handle this ticket?';
  const asked = await systemOne(TEXTS.slice(0, 1), { team: { ...QUESTIONS.team, instructions: question } });
  const labels = Object.entries(TEAMS).map(([name, description]) => ({ name, description }));
  const session = engine.admit();
  const { results } = await new Classify(engine)
    .classified(session, TEXTS.slice(0, 1), labels, { question })
    .finally(() => session.close());
  const a = asked.body[0]!.team as { probabilities: Record<string, number> };
  for (const name of Object.keys(TEAMS)) close(t, a.probabilities[name]!, results[0]!.scores[name]!, name);
});

t.test('a score reads its question: a cancelled subscription is a higher churn risk than praise', async (t) => {
  const churn = { type: 'score' as const, instructions: 'How likely is this customer to leave?', criteria: CHURN };
  const out = await systemOne(TEXTS.slice(1), { churn });
  const [cancelled, praise] = out.body.map((a) => (a.churn as { score: number }).score);
  t.ok(cancelled! > praise!, `expected levels ${cancelled} and ${praise}`);
});

t.test('a choice answers the same whatever order its options come in', async (t) => {
  const reversed = { type: 'choice' as const, criteria: Object.fromEntries(Object.entries(TEAMS).reverse()) };
  const out = await systemOne(TEXTS, { team: reversed });
  out.body.forEach((a, i) => {
    const got = (a.team as { probabilities: Record<string, number> }).probabilities;
    const first = (answers[i]!.team as { probabilities: Record<string, number> }).probabilities;
    for (const name of Object.keys(TEAMS)) t.ok(Math.abs(got[name]! - first[name]!) <= 1e-6, `text ${i} ${name}`);
  });
});

t.test('a noul and a choice share the state: one request reads fewer tokens than the three routes', async (t) => {
  const one = await systemOne(TEXTS.slice(0, 1), QUESTIONS);
  const alone = await Promise.all([
    decide(engine, s.yesNo, { text: TEXTS[0]!, statement: 'x' }),
    decide(engine, s.classify, { text: TEXTS[0]!, labels: TEAMS }),
    decide(engine, s.rate, { text: TEXTS[0]!, scale: CHURN }),
  ]);
  const three = alone.reduce((n, o) => n + o.inputTokens, 0);
  t.ok(one.inputTokens < three, `${one.inputTokens} tokens for the request, ${three} for the three routes`);
});

t.test('a comparing noul is yes-no asked the same: the number the text gives, compared', async (t) => {
  const orders = [
    'The order was for $2821 and arrived 7 days ago, with the wrong item inside.',
    'I paid $262 for the groceries; they came 3 days after the promised date.',
  ];
  const question = 'Is the order worth more than $500?';
  const out = await systemOne(orders, { high_value: { type: 'noul', instructions: question } });
  const typed = (await decide(engine, s.yesNo, { texts: orders, statement: question })).body as {
    results: YesNoResult[];
  };
  const p = out.body.map((a) => (a.high_value as { noul: number }).noul);
  p.forEach((x, i) => close(t, x, typed.results[i]!.probability, `text ${i}`));
  t.ok(p[0]! > 0.8, `$2821 is more than $500: ${p[0]}`);
  t.ok(p[1]! < 0.2, `$262 is not: ${p[1]}`);
});

t.test('a choice whose options state conditions is classify asked the same: the condition met decides', async (t) => {
  const returns = [
    'My blender arrived 45 days ago. I have used it every day, and now I would like to send it back for my money.',
    'You sent me a kettle instead of the blender I ordered. It arrived yesterday.',
    'The blender arrived 5 days ago and is still sealed in its box; I changed my mind and want my money back.',
  ];
  const rules = {
    refund: 'Refund the customer: an unopened return within 30 days',
    deny: 'Refuse the return: the item was opened, or it was delivered more than 30 days ago',
    replace: 'Send a replacement: the wrong item was sent',
  };
  const out = await systemOne(returns, { decision: { type: 'choice', criteria: rules } });
  const typed = (await decide(engine, s.classify, { texts: returns, labels: rules })).body as {
    results: ClassifyResult[];
  };
  out.body.forEach((a, i) => {
    const got = a.decision as { choice: string; probabilities: Record<string, number> };
    for (const name of Object.keys(rules)) close(t, got.probabilities[name]!, typed.results[i]!.scores[name]!, name);
  });
  t.same(
    out.body.map((a) => (a.decision as { choice: string }).choice),
    ['deny', 'replace', 'refund'],
  );
});

t.test('a choice or score of yes and no is the noul: the same P(yes) as yes-no', async (t) => {
  const instructions = 'Does the customer report a payment problem?';
  const out = await systemOne(TEXTS, {
    noul: { type: 'noul', instructions },
    choice: { type: 'choice', instructions, criteria: { no: 'No', yes: 'Yes' } },
    score: { type: 'score', instructions, criteria: ['False', 'True'] },
  });
  const typed = await decide(engine, s.yesNo, { texts: TEXTS, statement: instructions });
  const yesNo = (typed.body as { results: YesNoResult[] }).results;
  out.body.forEach((a, i) => {
    const p = yesNo[i]!.probability;
    const choice = a.choice as { choice: string; probabilities: Record<string, number> };
    const score = a.score as { score: number; probabilities: Record<string, number> };
    close(t, (a.noul as { noul: number }).noul, p, `text ${i} noul`);
    close(t, choice.probabilities.yes!, p, `text ${i} choice yes`);
    close(t, choice.probabilities.no!, 1 - p, `text ${i} choice no`);
    t.equal(choice.choice, p > 0.5 ? 'yes' : 'no', `text ${i}: the choice is the noul's answer`);
    close(t, score.probabilities['1']!, p, `text ${i} score True`);
    close(t, score.score, p, `text ${i} expected level`);
  });
  t.equal((out.body[0]!.choice as { choice: string }).choice, 'yes', 'charged twice: a payment problem');
});
