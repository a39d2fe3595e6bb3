// Request bodies as JSON, and what a route's cost counts in them.
import t from 'tap';
import { countItems } from '../../src/http/json.js';
import type { ApiRequest } from '../../src/http/types.js';

const req = (body: unknown) =>
  ({ body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), headers: {} }) as unknown as ApiRequest;

t.test('cost: one per item of the named lists, at least one', async (t) => {
  const capability = ['texts', 'statements', 'questions'];
  t.equal(countItems(req({ text: 'a', statement: 'b' }), capability), 1);
  t.equal(countItems(req({ texts: ['a', 'b', 'c'], statement: 'b' }), capability), 3);
  t.equal(countItems(req({ text: 'a', statements: ['x', 'y'] }), capability), 2);
  t.equal(countItems(req({ texts: ['a', 'b'], statements: ['x', 'y', 'z'] }), capability), 5);
  t.equal(
    countItems(req({ text: 'a', questions: Array(100).fill('q') }), capability),
    32,
    'capped at the validation limit',
  );
  t.equal(
    countItems(req({ state: 'x', questions: { a: {}, b: {} } }), ['questions', 'states']),
    2,
    'object keys count',
  );
  t.equal(countItems(req('{"text": '), capability), 1, 'invalid JSON is one request');
  t.equal(countItems(req('RIFF....WAVE'), capability), 1, 'raw bodies are one request');
});
