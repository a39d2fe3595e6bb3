// The chat-completions facade's request and response schemas (unknown fields are accepted).
import { Type, type Static } from '@sinclair/typebox';
import { ERRORS } from '../errors.js';
import { IMAGES_UNSUPPORTED } from './systemone.js';

const Role = Type.Union(['system', 'user', 'assistant', 'tool', 'developer'].map((r) => Type.Literal(r)));

const ContentPart = Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) });

export const ChatMessage = Type.Object({
  role: Role,
  content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()])),
});

export const ResponseFormat = Type.Union([
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Type.Optional(Type.String()),
      schema: Type.Record(Type.String(), Type.Unknown()),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    }),
  }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({ type: Type.Literal('text') }),
]);

export const Tool = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
});

export const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String({ minLength: 1 }) }) }),
]);

export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String(),
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    response_format: Type.Optional(ResponseFormat),
    tools: Type.Optional(Type.Array(Tool, { maxItems: 64 })),
    tool_choice: Type.Optional(ToolChoice),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  {
    $id: 'ChatCompletionRequest',
    description:
      'Sampling fields (temperature, top_p, max_tokens...) and other unknown fields are accepted and ignored.',
  },
);

const ToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String({ description: 'JSON' }) }),
});

export const ChatCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({
          role: Type.Literal('assistant'),
          content: Type.Union([Type.String(), Type.Null()]),
          tool_calls: Type.Optional(Type.Array(ToolCall)),
        }),
        finish_reason: Type.Union([Type.Literal('stop'), Type.Literal('tool_calls')]),
      }),
    ),
    usage: Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
  },
  { $id: 'ChatCompletionResponse' },
);

/** Content parts this deployment cannot read: any image, named as OpenAI's clients send it. */
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);

/** Throws a 400 naming the message when a request carries an image. */
export function refuseImages(request: Static<typeof ChatCompletionRequest>): void {
  request.messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    const j = m.content.findIndex((part) => IMAGE_PARTS.has(part.type));
    if (j >= 0) throw ERRORS.invalidRequest(`messages.${i}.content.${j}: ${IMAGES_UNSUPPORTED}`);
  });
}
