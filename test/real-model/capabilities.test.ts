// classify, classify-tree and rate on the real model: clear cases decided correctly.
import t from 'tap';
import { serviceOf } from '../../src/service.js';
import { openTestEngine } from '../helpers/model.js';
import { decide } from '../helpers/requests.js';

const engine = await openTestEngine();
t.teardown(() => engine.close());
const s = serviceOf(engine);

t.test('classify picks the clear topic, multi-token labels included', async (t) => {
  const out = await decide(engine, s.classify, {
    texts: ['The striker scored twice in the final.', 'Parliament voted on the new tax law.'],
    labels: ['sports news', 'politics', 'cooking recipe'],
  });
  const results = (out.body as { results: { label: string; probability: number }[] }).results;
  t.same(
    results.map((r) => r.label),
    ['sports news', 'politics'],
  );
  t.ok(results.every((r) => r.probability > 0.5));
});

t.test('classify tells apart labels that begin with the same words', async (t) => {
  const labels = ['account deletion', 'account access', 'billing'];
  const out = await decide(engine, s.classify, {
    texts: [
      'Please close my account for good and erase all of my data.',
      'I cannot log in: the password reset link never arrives.',
    ],
    labels,
  });
  const results = (out.body as { results: { label: string; scores: Record<string, number> }[] }).results;
  t.same(
    results.map((r) => r.label),
    ['account deletion', 'account access'],
  );
  for (const r of results)
    t.ok(Math.abs(Object.values(r.scores).reduce((a, b) => a + b, 0) - 1) < 1e-9, 'scores sum to 1');
});

t.test('classify decides the same whatever order the labels come in, close or clear', async (t) => {
  // Every set is read in its own orders, which depend only on the labels: near-synonyms (no reading
  // is clear) and a clear case with descriptions alike.
  const cases: { text: string; labels: [string, string][] }[] = [
    {
      text: 'I am not happy about how this was handled.',
      labels: [
        ['complaint', ''],
        ['grievance', ''],
        ['objection', ''],
        ['protest', ''],
      ],
    },
    {
      text: 'I was charged twice for my March invoice.',
      labels: [
        ['billing', 'payments and invoices'],
        ['login', 'cannot sign in'],
        ['shipping', 'parcels and deliveries'],
        ['other', 'anything else'],
      ],
    },
  ];
  for (const { text, labels } of cases) {
    const decided = [];
    for (let k = 0; k < labels.length; k++) {
      const listed = Object.fromEntries([...labels.slice(k), ...labels.slice(0, k)].reverse());
      decided.push(
        (await decide(engine, s.classify, { text, labels: listed })).body as {
          label: string;
          scores: Record<string, number>;
        },
      );
    }
    t.same(new Set(decided.map((d) => d.label)).size, 1, `one label in every order: ${decided.map((d) => d.label)}`);
    for (const d of decided.slice(1))
      for (const [l] of labels) t.ok(Math.abs(d.scores[l]! - decided[0]!.scores[l]!) < 1e-6, `${l}: the same score`);
  }
});

t.test('classify-tree descends into the winner', async (t) => {
  const tree = {
    order: { description: 'orders and deliveries', labels: { damaged: 'arrived broken', late: 'delivery is late' } },
    account: { description: 'the customer account', labels: { login: 'cannot sign in', privacy: 'personal data' } },
  };
  const out = await decide(engine, s.classifyTree, {
    text: 'My parcel arrived with the screen smashed to pieces.',
    tree,
  });
  const r = out.body as { path: string[]; levels: { input_tokens: number }[] };
  t.same(r.path, ['order', 'damaged']);
  t.equal(out.inputTokens, r.levels[0]!.input_tokens + r.levels[1]!.input_tokens);
});

t.test('rate puts clear texts at the ends of the scale', async (t) => {
  const scale = ['very bad', 'bad', 'average', 'good', 'excellent'];
  const out = await decide(engine, s.rate, {
    texts: ['Awful. Cold food, rude staff, never again.', 'Perfect in every way, the best meal of my life.'],
    scale,
  });
  const [low, high] = (out.body as { results: { level: number; score: number }[] }).results;
  t.ok(low!.level <= 1, `low level ${low!.level}`);
  t.ok(high!.level >= 3, `high level ${high!.level}`);
  t.ok(high!.score > low!.score);
});

t.test('answer copies the span from the text, or says null', async (t) => {
  const text = 'Your flight departs from gate B12 at 14:35.';
  const out = await decide(engine, s.answer, { text, questions: ['Which gate?', 'What is the price of the ticket?'] });
  const [gate, price] = (
    out.body as { results: { answer: string | null; start: number | null; end: number | null; probability: number }[] }
  ).results;
  t.equal(gate!.answer, 'B12');
  t.equal(text.slice(gate!.start!, gate!.end!), 'B12');
  t.equal(price!.answer, null);
  t.equal(price!.probability, 0);
});

t.test('entities finds typed spans with exact offsets', async (t) => {
  const text = 'Tim Cook announced that Apple will open a campus in Austin.';
  const out = await decide(engine, s.entities, { text, types: ['person', 'organization', 'city'] });
  const entities = (out.body as { entities: { type: string; text: string; start: number; end: number }[] }).entities;
  t.same(
    entities.map((e) => `${e.type}: ${e.text}`),
    ['person: Tim Cook', 'organization: Apple', 'city: Austin'],
  );
  for (const e of entities) t.equal(text.slice(e.start, e.end), e.text);
});

t.test('entities lists every name of a type, each written as the model writes it on its own line', async (t) => {
  // Alone on a line a name has no leading space, and "Valencia" is then two tokens where the
  // text's " Valencia" is one: the copier must take both forms.
  const text = 'Marie Curie shared the prize with Pierre Curie and Henri Becquerel, then lectured in Valencia.';
  const out = await decide(engine, s.entities, { text, types: ['person', 'city'] });
  const entities = (out.body as { entities: { type: string; text: string; start: number; end: number }[] }).entities;
  t.same(
    entities.map((e) => `${e.type}: ${e.text}`),
    ['person: Marie Curie', 'person: Pierre Curie', 'person: Henri Becquerel', 'city: Valencia'],
  );
  for (const e of entities) t.equal(text.slice(e.start, e.end), e.text);
});

t.test('entities lists words the text splits otherwise than a list item begins them', async (t) => {
  // " atorvastatin" is " at" "or" "v" "ast" "atin" in the text, "ator" "v" "ast" "atin" alone on a line:
  // without the whole word as a start form the model's first token was not in the text (p = 0.01).
  const text = 'Discharge plan: continue bisoprolol 2.5 mg daily, start atorvastatin 40 mg at night and stop ramipril.';
  const out = await decide(engine, s.entities, { text, types: { medication: 'drug names only' } });
  const entities = (out.body as { entities: { type: string; text: string }[] }).entities;
  t.same(
    entities.map((e) => e.text),
    ['bisoprolol', 'atorvastatin', 'ramipril'],
  );
});

t.test('entities copies a number with the unit or letters that follow it', async (t) => {
  // Without the join the model ended these after the digits: "1000", "5", "KM19", "LD21".
  const text =
    'Continue metformin 1000 mg twice daily and amlodipine 5 mg once daily. Vehicles KM19 XTB and LD21 PWA were involved.';
  const types = { dosage: 'amount per dose, such as 10 mg', 'licence plate': 'vehicle registration numbers' };
  const out = await decide(engine, s.entities, { text, types });
  const entities = (out.body as { entities: { type: string; text: string; start: number; end: number }[] }).entities;
  const found = entities.map((e) => `${e.type}: ${e.text}`);
  for (const whole of ['dosage: 1000 mg', 'licence plate: KM19 XTB', 'licence plate: LD21 PWA'])
    t.ok(found.includes(whole), `${whole} in ${JSON.stringify(found)}`);
  t.notOk(
    entities.some((e) => /\d$/.test(e.text)),
    'no value cut after its digits',
  );
  for (const e of entities) t.equal(text.slice(e.start, e.end), e.text);
});

t.test(
  'entities copies a percentage whole, though the model writes its "%" and the line break as one token',
  async (t) => {
    const text = 'Revenue rose 12% to €4.8 billion, while net profit fell 3.5% to €610 million.';
    const out = await decide(engine, s.entities, {
      text,
      types: { money: 'amounts of money', percentage: 'percentages' },
    });
    const entities = (out.body as { entities: { type: string; text: string }[] }).entities;
    t.same(
      entities.filter((e) => e.type === 'percentage').map((e) => e.text),
      ['12%', '3.5%'],
    );
  },
);

t.test(
  'entities with the 64 types a request may name: more lists than one slot holds at once, all answered',
  async (t) => {
    // 64 branches that could each copy 16 spans need far more context than the slot's 4096 tokens:
    // the copier runs them in groups instead of refusing the request.
    const types = ['person', 'city', ...Array.from({ length: 62 }, (_, i) => `unused kind ${i}`)];
    const out = await decide(engine, s.entities, { text: 'Marie Curie lectured in Valencia.', types });
    const entities = (out.body as { entities: { type: string; text: string }[] }).entities;
    t.same(
      entities.filter((e) => e.type === 'person' || e.type === 'city').map((e) => `${e.type}: ${e.text}`),
      ['person: Marie Curie', 'city: Valencia'],
    );
  },
);

t.test('verify reads the field and compares numbers as numbers', async (t) => {
  const text = 'Invoice total: 2,000 USD, due in 30 days.';
  const right = (await decide(engine, s.verify, { text, field: { name: 'invoice total' }, value: 2000 })).body as {
    matches: boolean;
    found: string[];
  };
  const wrong = (await decide(engine, s.verify, { text, field: { name: 'invoice total' }, value: 2500 })).body as {
    matches: boolean;
  };
  t.equal(right.matches, true);
  t.ok(
    right.found.some((f) => f.includes('2,000')),
    `found ${JSON.stringify(right.found)}`,
  );
  t.equal(wrong.matches, false);
});

t.test(
  'extract: a value over several lines comes back on one line; booleans and enums answered, with or without spans',
  async (t) => {
    const text = 'Order 5512\nShip to:\n17 Fern Close,\nHarrogate HG2 7LT\nPaid by card. Express delivery requested.';
    const schema = {
      type: 'object',
      properties: {
        address: { type: 'string', description: 'shipping address' },
        paid: { type: 'boolean', description: 'the order is paid' },
        delivery: { type: 'string', enum: ['standard', 'express'] }, // one token per option
        payment: { type: 'string', enum: ['credit card', 'bank transfer', 'cash on delivery'] }, // several
      },
    };
    const out = await decide(engine, s.extract, { text, schema });
    t.same((out.body as { data: unknown }).data, {
      address: '17 Fern Close, Harrogate HG2 7LT',
      paid: true,
      delivery: 'express',
      payment: 'credit card',
    });
    // Without a field to copy, the flag and the one-token choice are read on their own.
    const { paid, delivery } = schema.properties;
    const choicesOnly = await decide(engine, s.extract, {
      text,
      schema: { type: 'object', properties: { paid, delivery } },
    });
    t.same((choicesOnly.body as { data: unknown }).data, { paid: true, delivery: 'express' });
  },
);

t.test('extract: a list the text writes on one line comes back as one item per name', async (t) => {
  const text = 'Standup, 4 June\nPresent: Nadia Rahman, Tomás Silva, Ewa Nowak\nApologies: Ben Carter';
  const schema = {
    type: 'object',
    properties: {
      date: { type: 'string' }, // a single value, asked in the same span job as the list
      present: { type: 'array', description: 'people present', items: { type: 'string' } },
    },
  };
  const out = await decide(engine, s.extract, { text, schema });
  const data = (out.body as { data: { date: string; present: string[] } }).data;
  t.equal(data.date, '4 June');
  t.same(data.present, ['Nadia Rahman', 'Tomás Silva', 'Ewa Nowak']);
});

t.test('extract: a list item ends with its line, even where the line ends on a bracket', async (t) => {
  // ")" and the line break are one token: copying it once carried an item into the next line.
  const text =
    'Discharge plan for ward 4\nMedications:\n1. Metformin 500 mg twice daily (continued)\n' +
    '2. Lisinopril 10 mg once daily (new)\n3. Atorvastatin 20 mg at night (new)\nReview in 2 weeks.';
  const schema = { type: 'object', properties: { medications: { type: 'array', items: { type: 'string' } } } };
  const out = await decide(engine, s.extract, { text, schema });
  const items = (out.body as { data: { medications: string[] } }).data.medications;
  t.equal(items.length, 3, JSON.stringify(items));
  for (const [k, drug] of ['Metformin', 'Lisinopril', 'Atorvastatin'].entries())
    t.match(items[k], new RegExp(`^${drug}\\b[^\\d]*\\d+ mg[^.]*$`));
});

t.test('extract: nested objects are filled from their own party', async (t) => {
  const text =
    'FROM: Harbour Books Ltd, 4 Quay Street, Cork\nTO: Maria Lopez, 22 Elm Avenue, Galway, tel. 091 555 2040\n' +
    'Weight: 1.2 kg';
  const party = (...keys: string[]) => ({
    type: 'object',
    properties: Object.fromEntries(keys.map((k) => [k, { type: 'string' }])),
  });
  const schema = { type: 'object', properties: { sender: party('name'), recipient: party('name', 'phone') } };
  const out = await decide(engine, s.extract, { text, schema });
  t.same((out.body as { data: unknown }).data, {
    sender: { name: 'Harbour Books Ltd' },
    recipient: { name: 'Maria Lopez', phone: '091 555 2040' },
  });
});

t.test('extract: a list in a sentence comes back whole, and an abbreviation keeps its period', async (t) => {
  const text =
    'Panelists at the Harbour Energy Summit include Dr. Aisha Bello, Prof. Jonas Berg and Carmen Ruiz. ' +
    'Hosted by Nordlicht Consulting GmbH & Co. K.G.';
  const schema = {
    type: 'object',
    properties: {
      panelists: { type: 'array', items: { type: 'string' } },
      host: { type: 'string', description: 'the company hosting' },
    },
  };
  const out = await decide(engine, s.extract, { text, schema });
  const data = (out.body as { data: { panelists: string[]; host: string } }).data;
  t.equal(data.panelists.length, 3, `three panelists: ${JSON.stringify(data.panelists)}`);
  t.ok(
    ['Aisha Bello', 'Jonas Berg', 'Carmen Ruiz'].every((name) => data.panelists.some((p) => p.endsWith(name))),
    'each of them',
  );
  t.equal(data.host, 'Nordlicht Consulting GmbH & Co. K.G.');
});

t.test('extract: an e-mail or web address field is copied from such a value, not the name beside it', async (t) => {
  const text =
    'Signed up: Omar Haddad (omar.h@example.org), referred by Lena Vogel. ' +
    'Owners: Priya Shah <priya@shahco.in> and Marco Conti <m.conti@contiit.it>. Website: https://shahco.in/about';
  const schema = {
    type: 'object',
    properties: {
      contact: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string' } } },
      owner_contacts: { type: 'array', items: { type: 'string', format: 'email' } },
      site: { type: 'string', format: 'uri' },
    },
  };
  const out = await decide(engine, s.extract, { text, schema });
  const data = (out.body as { data: { contact: unknown; owner_contacts: string[]; site: string } }).data;
  t.same(data.contact, { name: 'Omar Haddad', email: 'omar.h@example.org' });
  t.equal(data.site, 'https://shahco.in/about');
  t.ok(
    data.owner_contacts.every((c) => c.includes('@')),
    `only addresses: ${JSON.stringify(data.owner_contacts)}`,
  );
  t.ok(['priya@shahco.in', 'm.conti@contiit.it'].every((e) => data.owner_contacts.includes(e)));
});

t.test('extract: a telephone field is filled from the number the text gives', async (t) => {
  const text = 'Booking for Ahmed Khan (ahmed.khan@mailbox.org). Call back on 07911 123456 if the flight changes.';
  const party = { type: 'object', properties: { name: { type: 'string' }, phone: { type: 'string' } } };
  const out = await decide(engine, s.extract, { text, schema: { type: 'object', properties: { guest: party } } });
  t.same((out.body as { data: unknown }).data, { guest: { name: 'Ahmed Khan', phone: '07911 123456' } });
});
