// One valid request per operation, keyed by path: what the auth matrix and the contract test
// send when they need a call to succeed. A route without an entry here fails those tests.
const text = 'Sam Ortiz paid 2000 USD in Paris on Thursday.';

export const EXAMPLES: Readonly<Record<string, unknown>> = {
  '/v1/decision-machine-1/yes-no': { text, statements: ['It was paid [true]', 'It was free'] },
  '/v1/decision-machine-1/classify': { texts: [text, 'hello'], labels: ['payment', 'greeting'] },
  '/v1/decision-machine-1/classify-tree': {
    text,
    tree: { money: { description: 'payments', labels: { paid: 'paid', refund: 'refunds' } }, other: 'anything else' },
  },
  '/v1/decision-machine-1/rate': { text, scale: ['low', 'mid', 'high'] },
  '/v1/decision-machine-1/answer': { text, questions: ['Who paid?', 'Where?'] },
  '/v1/decision-machine-1/extract': {
    text,
    schema: { type: 'object', properties: { payer: { type: 'string' }, amount: { type: 'number' } } },
  },
  '/v1/decision-machine-1/entities': { text, types: ['person', 'place'] },
  '/v1/decision-machine-1/verify': { text, field: { name: 'amount' }, value: 2000 },
  '/v1/systemone': {
    model: 'jev-latest',
    state: text,
    questions: {
      paid: { type: 'noul', instructions: 'It was paid [true]' },
      city: { type: 'choice', criteria: { Paris: null, Rome: null } },
    },
  },
  '/v1/systemone/batch': {
    model: 'decision-machine-1',
    states: [text, 'hello'],
    questions: { level: { type: 'score', criteria: ['low', 'high'] } },
  },
  '/v1/chat/completions': {
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: text }],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'payment', schema: { type: 'object', properties: { payer: { type: 'string' } } } },
    },
  },
};

/** A concrete path for a route pattern. */
export function concrete(path: string): string {
  return path.replace(':id', 'decision-machine-1').replace('{id}', 'decision-machine-1').replace(':name', 'readme');
}
