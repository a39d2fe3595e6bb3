// How verify compares a found span with the value: numbers as numbers, words normalised.
import t from 'tap';
import { agrees, numberIn } from '../../src/decisions/verify.js';

t.test('numbers are read from spans', async (t) => {
  t.equal(numberIn('2,000 USD'), 2000);
  t.equal(numberIn('1,100 GBP'), 1100);
  t.equal(numberIn('3.5%'), 3.5);
  t.equal(numberIn('10 000 EUR'), 10000);
  t.equal(numberIn('from 2 to 5'), undefined, 'two numbers: not one value');
  t.equal(numberIn('no digits'), undefined);
});

t.test('a span agrees with a value', async (t) => {
  t.ok(agrees('2,000 USD', 2000));
  t.ok(agrees('2,000 USD', '2000'));
  t.notOk(agrees('1,100 GBP', 1200));
  t.ok(agrees('Dr. Ines Carvalho', 'Ines Carvalho'), 'the value inside the span');
  t.ok(agrees('LONDON', 'london'));
  t.notOk(agrees('Lisbon', 'Porto'));
  t.notOk(agrees('Lisbon', ''));
  t.ok(agrees('1 September 2025', '1 September 2025'));
});
