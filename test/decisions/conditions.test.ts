// Which conditions an option's description states, how each is asked, and the evidence they give.
import t from 'tap';
import { conditionQuestion, conditionsOf, evidenceOf } from '../../src/decisions/conditions.js';

t.test('the conditions are what follows the colon, one per "or", comma or semicolon', async (t) => {
  t.same(conditionsOf('Refuse the return: the item was opened, or it was delivered more than 30 days ago'), [
    'the item was opened',
    'it was delivered more than 30 days ago',
  ]);
  t.same(conditionsOf('Move forward: the required skill, a panel majority; a supported transfer.'), [
    'the required skill',
    'a panel majority',
    'a supported transfer',
  ]);
  t.same(
    conditionsOf('Pass it to a supervisor: a bill 3 or more months overdue, or a claim 30 days old or less'),
    ['a bill 3 or more months overdue', 'a claim 30 days old or less'],
    'the "or" of a comparison does not part it',
  );
});

t.test('a description without a colon states no condition', async (t) => {
  t.same(conditionsOf('Fixes broken product functionality'), []);
  t.same(conditionsOf(undefined), []);
  t.same(conditionsOf('Close it:'), []);
});

t.test('a condition is asked as a yes/no question about the text', async (t) => {
  t.equal(conditionQuestion('the item was opened'), 'Is this the case: the item was opened?');
});

t.test("an option's evidence is the log-odds of its likeliest condition, none without conditions", async (t) => {
  const [refund, deny, keep] = evidenceOf([[0.2, 0.5], [0.9], []]);
  t.equal(refund, 0, 'even odds');
  t.ok(Math.abs(deny! - Math.log(9)) < 1e-12);
  t.equal(keep, 0);
  const [certain, never] = evidenceOf([[1], [0]]);
  t.ok(Number.isFinite(certain) && certain! > 9 && certain! < 9.3, 'bounded: the listing keeps a say');
  t.ok(Math.abs(never! + certain!) < 1e-9, 'and as far the other way');
});
