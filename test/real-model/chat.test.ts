// The chat facade on the real model through the official openai client: a tool call with its
// required argument copied from the request, and structured extraction.
import t from 'tap';
import OpenAI from 'openai';
import { startServer } from '../helpers/server.js';
import { testModelPath } from '../helpers/model.js';

const server = await startServer(undefined, { modelPath: await testModelPath(), slots: 2, queue: 2 });
t.teardown(server.close);
const client = new OpenAI({ apiKey: 'any', baseURL: `${server.url}/v1`, maxRetries: 0 });

t.test('function calling picks the tool and fills its arguments', async (t) => {
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: 'Where is my order A-7731? It has not arrived.' }],
    tools: [
      {
        type: 'function',
        function: {
          name: 'track_order',
          description: 'where is an order, delivery status',
          parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'cancel_subscription',
          description: 'end a subscription plan',
          parameters: { type: 'object', properties: { plan: { type: 'string' } }, required: ['plan'] },
        },
      },
    ],
  });
  const call = res.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
  t.equal(call.function.name, 'track_order');
  t.same(JSON.parse(call.function.arguments), { order_id: 'A-7731' });
});

t.test('structured extraction returns the filled schema as content, typed', async (t) => {
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: 'Booking for Sam Ortiz: 2 adults, total 620 USD.' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'booking',
        schema: {
          type: 'object',
          properties: { guest: { type: 'string' }, adults: { type: 'integer' }, total: { type: 'number' } },
        },
      },
    },
  });
  // Field accuracy is measured by bench/eval/eval.ts; here: the schema's keys, its types, a clear value.
  const data = JSON.parse(res.choices[0]!.message.content!) as { guest: unknown; adults: unknown; total: unknown };
  t.same(Object.keys(data), ['guest', 'adults', 'total']);
  t.equal(data.guest, 'Sam Ortiz');
  t.equal(data.total, 620);
  t.ok(data.adults === null || Number.isInteger(data.adults), 'integer or null');
});
