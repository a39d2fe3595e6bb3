// One valid request per operation, keyed by path: what the auth matrix and the contract test
// send when they need a call to succeed. The capabilities' come from their table (each is the
// example /openapi.json shows); a route without an entry here fails those tests.
import { CAPABILITY_PREFIX, EXAMPLE_TEXT as text } from '../../src/api/capability.js';
import { CAPABILITIES } from '../../src/decisions/capabilities.js';

export const EXAMPLES: Readonly<Record<string, unknown>> = {
  ...Object.fromEntries(CAPABILITIES.map((c) => [`${CAPABILITY_PREFIX}/${c.name}`, c.example])),
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
  // A whole fit line: a correction for a decision the service never made.
  [`${CAPABILITY_PREFIX}/feedback`]: {
    cap: 'classify',
    req: { text, labels: ['payment', 'greeting'] },
    expect: { label: 'payment' },
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
