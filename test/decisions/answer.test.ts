// What answer keeps of a copied span: a count whose unit the question names is the number; a why-answer is the reason.
import t from 'tap';
import { withoutAskedUnit, withoutCause } from '../../src/decisions/answer.js';

const span = (text: string, start = 10) => ({ text, start, end: start + text.length });

t.test('a unit the question names is dropped from a count', async (t) => {
  t.same(withoutAskedUnit(span('38 hours per week'), 'How many hours per week is the contract?'), span('38'));
  t.same(withoutAskedUnit(span('4 doses'), 'What is the maximum number of doses in 24 hours?'), span('4'));
  t.same(withoutAskedUnit(span('twelve engineers'), 'How many engineers are on the team?'), span('twelve'));
});

t.test('a unit the question does not name stays', async (t) => {
  t.same(withoutAskedUnit(span('330 metres'), 'How tall is the tower?'), span('330 metres'));
  t.same(
    withoutAskedUnit(span('5 ml every 4-6 hours'), 'What is the dose for children?'),
    span('5 ml every 4-6 hours'),
  );
  t.same(
    withoutAskedUnit(span('3 billion'), 'How many billion dollars were raised?'),
    span('3 billion'),
    'a scale is part of the number',
  );
  t.same(withoutAskedUnit(span('Laura Chen'), 'Who announced the plan?'), span('Laura Chen'));
});

t.test('a why question is answered by the reason, without its connective', async (t) => {
  t.same(
    withoutCause(span('because of fog in Amsterdam'), 'Why was the flight delayed?'),
    span('fog in Amsterdam', 21),
  );
  t.same(withoutCause(span('due to a strike'), 'why did it close?'), span('a strike', 17));
  t.same(withoutCause(span('because of fog'), 'What delayed the flight?'), span('because of fog'), 'only for why');
});
