// Which fields hold a kind of value, and where such values begin in a text.
import t from 'tap';
import { kindOf, valueStarts } from '../../src/decisions/value-kinds.js';

t.test('a kind from the format, else from the words of the name', async (t) => {
  t.equal(kindOf('x', 'email'), 'email');
  t.equal(kindOf('homepage', 'uri'), 'url');
  t.equal(kindOf('email', 'date'), undefined, 'a format of no kind wins over the name');
  t.equal(kindOf('contact_email'), 'email');
  t.equal(kindOf('e-mail'), 'email');
  t.equal(kindOf('emailAddress'), 'email');
  t.equal(kindOf('next_of_kin_phone'), 'phone');
  t.equal(kindOf('phoneNumber'), 'phone');
  t.equal(kindOf('company-website'), 'url');
  t.equal(kindOf('email_or_phone'), undefined, 'two kinds: neither');
  t.equal(kindOf('mailing_address'), undefined);
  t.equal(kindOf('telescope'), undefined);
  t.equal(kindOf('name'), undefined);
});

t.test('values begin where the address or number begins', async (t) => {
  const text = 'Dana (dana.w@north-wind.co.uk), tel. +44 20 7946 0321, web www.northwind.example/contact; order 12345.';
  t.same(
    valueStarts('email', text).map((i) => text.slice(i, i + 6)),
    ['dana.w'],
  );
  t.same(
    valueStarts('phone', text).map((i) => text.slice(i, i + 3)),
    ['+44'],
    'five digits are no telephone number',
  );
  t.same(
    valueStarts('url', text).map((i) => text.slice(i, i + 4)),
    ['www.'],
  );
});
