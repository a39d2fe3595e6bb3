// Which questions yes-no reads as a comparison, the numbers a text offers, and the comparison computed.
import t from 'tap';
import { comparisonIn, holds, quantitiesIn } from '../../src/decisions/comparison.js';

t.test('a question comparing one quantity with a number is read as that comparison', async (t) => {
  t.same(comparisonIn('Is the order worth more than $500?'), { op: '>', threshold: 500 });
  t.same(comparisonIn('Was the claim denied within the last 30 days?'), { op: '<=', threshold: 30, unit: 'day' });
  t.same(comparisonIn('Is the bill 3 or more months overdue?'), { op: '>=', threshold: 3, unit: 'month' });
  t.same(comparisonIn('Is the deadline 2 days away or less?'), { op: '<=', threshold: 2, unit: 'day' });
  t.same(comparisonIn('Is $500,000 or more at stake?'), { op: '>=', threshold: 500_000 });
  t.same(comparisonIn('Does more than 30% of the text match other sources?'), { op: '>', threshold: 30 });
  t.same(comparisonIn('Has delivery been attempted more than once?'), { op: '>', threshold: 1 });
  t.same(comparisonIn('The laptop has at least eight GB of memory.'), { op: '>=', threshold: 8 });
  t.same(comparisonIn('Is the expense no more than $1,000?'), { op: '<=', threshold: 1000 });
  t.same(comparisonIn('Was the account created less than 30 days ago?'), { op: '<', threshold: 30, unit: 'day' });
});

t.test('anything but one plain comparison is left to the model', async (t) => {
  t.equal(comparisonIn('Is the device not more than 4 years old?'), undefined, 'a negation');
  t.equal(comparisonIn("Isn't the order worth more than $500?"), undefined, 'a negation');
  t.equal(comparisonIn('Did the agent change or delete more than 20 files?'), undefined, 'a disjunction');
  t.equal(comparisonIn('Is it over $500 and under $900?'), undefined, 'two comparisons');
  t.equal(comparisonIn('Were more than half of the units damaged?'), undefined, 'no number');
  t.equal(comparisonIn('Is the customer angry?'), undefined);
});

t.test('a text offers each number it states once, dates, times and identifiers aside', async (t) => {
  const text =
    'Order 459-2331-875 of $262, placed on 2026-03-01 at 09:03, arrived 3 days late on November 5th. ' +
    'Two months ago I returned 11 items; 1.2 million users, 30% share, 10,000 views, 3 days again.';
  t.same(
    quantitiesIn(text).map((q) => [q.written, q.value, q.unit]),
    [
      ['262', 262, undefined],
      ['3', 3, 'day'],
      ['Two', 2, 'month'],
      ['11', 11, undefined],
      ['1.2 million', 1_200_000, undefined],
      ['30', 30, undefined],
      ['10,000', 10_000, undefined],
    ],
  );
  t.same(quantitiesIn(text)[0]!.forms, ['262', '$262'], 'a reply may write it either way');
  t.same(quantitiesIn(text)[2]!.forms, ['Two', '2'], 'a number in words is offered in digits too');
  t.same(
    quantitiesIn('This is the third time I return something; my first order was fine. I waited a second.').map((q) => [
      q.written,
      q.value,
      q.forms,
    ]),
    [
      ['third', 3, ['third', '3']],
      ['first', 1, ['first', '1']],
    ],
    'an ordinal is its count, "second" is not read as one',
  );
  t.same(
    quantitiesIn('Three users reported it; 3 more wrote in.').map((q) => q.forms),
    [['Three', '3']],
    'a form belongs to the first number that has it',
  );
  t.same(quantitiesIn('No numbers here at all.'), []);
});

t.test('the comparison is computed, across time units when both name one', async (t) => {
  const days30 = comparisonIn('Was it delivered within the last 30 days?')!;
  t.ok(holds(days30, { value: 7, unit: 'day' }));
  t.ok(holds(days30, { value: 30, unit: 'day' }), 'within includes the bound');
  t.notOk(holds(days30, { value: 89, unit: 'day' }));
  t.notOk(holds(days30, { value: 2, unit: 'month' }), 'two months are about 61 days');
  t.ok(holds(days30, { value: 3, unit: 'week' }));
  const over500 = comparisonIn('Is the order worth more than $500?')!;
  t.ok(holds(over500, { value: 2821 }));
  t.notOk(holds(over500, { value: 500 }), 'more than excludes the bound');
});
