// How verify compares a found span with the value: numbers as numbers, words normalised.
import t from 'tap';
import { numberIn } from '../../src/decisions/numbers.js';
import { agrees } from '../../src/decisions/verify.js';

t.test('numbers are read from spans', async (t) => {
  t.equal(numberIn('2,000 USD'), 2000);
  t.equal(numberIn('1,100 GBP'), 1100);
  t.equal(numberIn('3.5%'), 3.5);
  t.equal(numberIn('10 000 EUR'), 10000);
  t.equal(numberIn('from 2 to 5'), undefined, 'two numbers: not one value');
  t.equal(numberIn('no digits'), undefined);
});

t.test('numbers written in words are read too', async (t) => {
  t.equal(numberIn('three bedrooms'), 3);
  t.equal(numberIn('Seventeen'), 17);
  t.equal(numberIn('twenty-five years'), 25);
  t.equal(numberIn('two hundred and ten'), 210);
  t.equal(numberIn('one million two hundred thousand'), 1_200_000);
  t.equal(numberIn('3 billion dollars'), 3e9);
  t.equal(numberIn('2.5 million'), 2.5e6);
  t.equal(numberIn('three bedrooms and two bathrooms'), undefined, 'two numbers: not one value');
  t.equal(numberIn('someone at the tennis club'), undefined, 'number words inside other words are not numbers');
  t.equal(numberIn('1 September 2025'), undefined);
});

t.test('a span agrees with a value', async (t) => {
  t.ok(agrees('2,000 USD', 2000));
  t.ok(agrees('2,000 USD', '2000'));
  t.notOk(agrees('1,100 GBP', 1200));
  t.ok(agrees('three', 3), 'a number in words is a number');
  t.notOk(agrees('two', 3));
  t.ok(agrees('Dr. Ines Carvalho', 'Ines Carvalho'), 'the value inside the span');
  t.ok(agrees('LONDON', 'london'));
  t.notOk(agrees('Lisbon', 'Porto'));
  t.notOk(agrees('Lisbon', ''));
  t.ok(agrees('1 September 2025', '1 September 2025'));
});
