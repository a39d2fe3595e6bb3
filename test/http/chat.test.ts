// The chat-completions facade driven by the official `openai` client (and raw HTTP for the exact
// bodies), over the fake binding: modes in the spec's order, tool_choice, streaming, errors.
import t from 'tap';
import OpenAI from 'openai';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake', slots: 2, queue: 2 });
t.teardown(server.close);
const client = new OpenAI({ apiKey: 'any string', baseURL: `${server.url}/v1`, maxRetries: 0 });
const url = `${server.url}/v1/chat/completions`;

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const time = {
  type: 'function' as const,
  function: { name: 'get_time', description: 'local time', parameters: { type: 'object', properties: {} } },
};

t.test('structured extraction: the JSON comes back as the assistant content', async (t) => {
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [
      { role: 'system', content: 'ignored' },
      { role: 'user', content: 'Sam Ortiz booked.' },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'booking', schema: { type: 'object', properties: { guest: { type: 'string' } } } },
    },
    temperature: 0.2,
  });
  t.equal(res.object, 'chat.completion');
  t.equal(res.model, 'decision-machine-1');
  t.equal(res.choices[0]!.finish_reason, 'stop');
  t.same(Object.keys(JSON.parse(res.choices[0]!.message.content!)), ['guest']);
  t.equal(res.usage!.total_tokens, res.usage!.prompt_tokens + res.usage!.completion_tokens);
  t.ok(res.usage!.prompt_tokens > 0);
});

t.test('function calling: a tool call with JSON arguments, ids unique', async (t) => {
  const ask = () =>
    client.chat.completions.create({
      model: 'decision-machine-1',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [weather, time],
    });
  const [a, b] = await Promise.all([ask(), ask()]);
  const call = a.choices[0]!.message.tool_calls![0]!;
  t.equal(a.choices[0]!.finish_reason, 'tool_calls');
  t.equal(a.choices[0]!.message.content, null);
  t.equal(call.type, 'function');
  t.ok(['get_weather', 'get_time'].includes((call as { function: { name: string } }).function.name));
  t.doesNotThrow(() => JSON.parse((call as { function: { arguments: string } }).function.arguments));
  t.not(call.id, b.choices[0]!.message.tool_calls![0]!.id);
});

t.test('tool_choice names a function: that one is called; tools win over response_format', async (t) => {
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What time' },
          { type: 'text', text: 'is it?' },
        ],
      },
    ],
    tools: [weather, time],
    tool_choice: { type: 'function', function: { name: 'get_time' } },
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } } } },
    },
  });
  const call = res.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
  t.equal(call.function.name, 'get_time');
  t.equal(call.function.arguments, '{}');
});

t.test('tool_choice none with a json_schema: structured extraction', async (t) => {
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: 'Oslo' }],
    tools: [weather],
    tool_choice: 'none',
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object', properties: { city: { type: 'string' } } } },
    },
  });
  t.equal(res.choices[0]!.finish_reason, 'stop');
  t.ok(res.choices[0]!.message.content);
});

t.test('stream: one chat.completion.chunk event, then [DONE]', async (t) => {
  const stream = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    tools: [weather],
    stream: true,
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.equal(chunks.length, 1);
  t.equal(chunks[0]!.object, 'chat.completion.chunk');
  t.equal(chunks[0]!.choices[0]!.finish_reason, 'tool_calls');
  const raw = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'decision-machine-1',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weather],
      stream: true,
    }),
  });
  t.match(raw.headers.get('content-type'), /^text\/event-stream/);
  t.match(await raw.text(), /^data: \{.*\}\n\ndata: \[DONE\]\n\n$/s);
});

t.test('errors arrive as the client typed exceptions, in the spec order', async (t) => {
  const unknown = await client.chat.completions.create({ model: 'gpt-4o', messages: [] }).catch((e: unknown) => e);
  t.ok(unknown instanceof OpenAI.NotFoundError, 'unknown model first, before the empty messages');
  const silent = await client.chat.completions
    .create({ model: 'decision-machine-1', messages: [{ role: 'system', content: 'hi' }], tools: [weather] })
    .catch((e: unknown) => e);
  t.ok(silent instanceof OpenAI.BadRequestError);
  const chatty = await client.chat.completions
    .create({ model: 'decision-machine-1', messages: [{ role: 'user', content: 'hello' }] })
    .catch((e: unknown) => e);
  t.ok(chatty instanceof OpenAI.BadRequestError);
  t.equal((chatty as InstanceType<typeof OpenAI.BadRequestError>).code, 'unsupported_request');
});

t.test('raw bodies: the exact error envelopes', async (t) => {
  const cases: [unknown, number, string, RegExp][] = [
    [
      { model: 'other', messages: [{ role: 'user', content: 'x' }] },
      404,
      'model_not_found',
      /^model "other" not found; use "decision-machine-1"$/,
    ],
    [
      { model: 'decision-machine-1', messages: [] },
      400,
      'invalid_request',
      /^messages: Too small: expected array to have >=1 items$/,
    ],
    [
      {
        model: 'decision-machine-1',
        messages: [
          { role: 'assistant', content: 'x' },
          { role: 'user', content: '' },
        ],
      },
      400,
      'invalid_request',
      /^messages: no user message with text$/,
    ],
    [
      {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_object' },
      },
      400,
      'unsupported_request',
      /does not chat.*response_format\.json_schema.*tools.*\/v1\/decision-machine-1\//,
    ],
    [
      {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'text' },
        tools: [weather],
        tool_choice: 'none',
      },
      400,
      'unsupported_request',
      /does not chat/,
    ],
    [
      {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: 'x' }],
        tools: [weather],
        tool_choice: { type: 'function', function: { name: 'nope' } },
      },
      400,
      'invalid_request',
      /no tool named "nope"/,
    ],
    [
      {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { schema: { type: 'string' } } },
      },
      400,
      'invalid_schema',
      /^schema must be an object with properties$/,
    ],
  ];
  for (const [body, status, code, message] of cases) {
    const res = await post(url, body);
    t.equal(res.status, status, code);
    t.equal(res.json.error.code, code);
    t.match(res.json.error.message, message);
  }
  const extra = await post(url, {
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: 'x', name: 'me' }],
    tools: [weather],
    user: 'abc',
    top_p: 0.1,
    max_tokens: 5,
  });
  t.equal(extra.status, 200, 'unknown and sampling fields accepted');
});

t.test('models.list and models.retrieve through the client', async (t) => {
  const list = [];
  for await (const m of client.models.list()) list.push(m.id);
  t.same(list, ['decision-machine-1']);
  t.equal((await client.models.retrieve('decision-machine-1')).id, 'decision-machine-1');
  t.ok((await client.models.retrieve('davinci').catch((e: unknown) => e)) instanceof OpenAI.NotFoundError);
});
