// Which System One questions ask yes or no: a choice or score of two options, one saying yes and
// one no, with instructions to ask.
import t from 'tap';
import { yesNoOf } from '../../src/decisions/questions.js';

const instructions = 'Does the customer ask for a refund?';

t.test('a choice or score of yes and no is the noul its instructions ask', async (t) => {
  const choice = { type: 'choice' as const, instructions, criteria: { no: 'No', yes: 'Yes' } };
  t.same(yesNoOf(choice), { statement: instructions, yes: 1 }, 'the yes option, wherever it is listed');
  t.same(yesNoOf({ ...choice, criteria: { True: null, False: null } }), { statement: instructions, yes: 0 });
  t.same(yesNoOf({ type: 'score', instructions, criteria: ['No', 'Yes'] }), { statement: instructions, yes: 1 });
  t.same(yesNoOf({ type: 'score', instructions, criteria: ['false', 'true.'] }), { statement: instructions, yes: 1 });
});

t.test('anything else is read as the choice or score it is', async (t) => {
  t.equal(yesNoOf({ type: 'choice', criteria: { yes: 'Yes', no: 'No' } }), undefined, 'no instructions to ask');
  t.equal(
    yesNoOf({ type: 'choice', instructions, criteria: { yes: 'Refund now', no: 'No' } }),
    undefined,
    'a description that says more than yes',
  );
  t.equal(yesNoOf({ type: 'choice', instructions, criteria: { yes: 'Yes', no: 'No', maybe: 'Maybe' } }), undefined);
  t.equal(yesNoOf({ type: 'score', instructions, criteria: ['Yes', 'True'] }), undefined, 'two that say yes');
  t.equal(yesNoOf({ type: 'score', instructions, criteria: ['Low', 'High'] }), undefined);
  t.equal(yesNoOf({ type: 'noul', instructions }), undefined);
});
