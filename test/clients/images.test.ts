// Image input, as the hosted SDK and OpenAI clients send it, gets a 400 that says this
// deployment does not read images (not an "unrecognized key"); an untyped schema property is a string.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatedServer } from '../helpers/gated-server.js';
import { post } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-images-'));
const server = await startGatedServer({ auth: 'off', databaseUrl: join(dir, 'service.db') });
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

t.test('a capability body with an image', async (t) => {
  const res = await post(`${server.url}/v1/decision-machine-1/classify`, {
    image: PNG,
    detail: 'low',
    labels: ['receipt', 'invoice'],
  });
  t.equal(res.status, 400);
  t.same(res.json.error, { code: 'invalid_request', message: 'image: images are not supported by this deployment' });
});

t.test('a chat message with an image part', async (t) => {
  const res = await post(`${server.url}/v1/chat/completions`, {
    model: 'decision-machine-1',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object', properties: { total: { type: 'string' } } } },
    },
  });
  t.equal(res.status, 400);
  t.same(res.json.error, {
    code: 'invalid_request',
    message: 'messages.0.content.1: images are not supported by this deployment',
  });
});

t.test('an extract schema property with only a description is read as a string', async (t) => {
  const schema = {
    type: 'object',
    properties: { invoice_number: { description: 'the identifier printed on the invoice' } },
  };
  const res = await post(`${server.url}/v1/decision-machine-1/extract`, { text: 'Invoice 4471.', schema });
  t.equal(res.status, 200, res.text);
  t.ok(res.json.data.invoice_number === null || typeof res.json.data.invoice_number === 'string');
  t.ok(Number(res.headers.get('x-inference-ms')) >= 0, 'x-inference-ms on every capability response');
});
