// The chat-completions facade: structured extraction (response_format.json_schema, via extract)
// and function calling (the tool chosen by scoring tool names and descriptions as in classify,
// its arguments filled from the tool's parameters schema as in extract). Plain chat is refused.
import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { ChatCompletionRequest, ChatMessage } from '../api/chat.js';
import { MODEL_ID } from '../api/models.js';
import type { Engine, Session } from '../engine/engine.js';
import { ERRORS } from '../errors.js';
import type { Classify } from './classify.js';
import { Extract, type ExtractWording } from './extract.js';
import { fieldsOf } from './schema-fields.js';

export type ChatRequest = Static<typeof ChatCompletionRequest>;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] };
    finish_reason: 'stop' | 'tool_calls';
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const UNSUPPORTED =
  'decision-machine-1 makes decisions and does not chat: send response_format.json_schema for structured ' +
  'extraction, tools for function calling, or use the capability endpoints under /v1/decision-machine-1/';

// Tool arguments come from a request, not a document: the model reads them as such.
const TOOL_ARGUMENTS: ExtractWording = {
  system:
    'You fill in the arguments of a function call from a user request. For an argument, copy its value from ' +
    'the request, the exact words; reply None only if the request does not say it. For a list, copy every ' +
    'value, one per line. For a yes/no argument reply Yes or No. For a choice, reply with one of the options.',
  text: 'Request',
  field: 'Argument',
  requiredFilled: true, // a call needs its required arguments: the best span, even when doubtful
};

export class Chat {
  private readonly toolArguments: Extract;

  constructor(
    private readonly engine: Engine,
    private readonly classify: Classify,
    private readonly extract: Extract,
  ) {
    this.toolArguments = new Extract(engine, TOOL_ARGUMENTS);
  }

  async complete(request: ChatRequest, session: Session): Promise<ChatCompletion> {
    const text = userText(request.messages);
    if (text === '') throw ERRORS.invalidRequest('messages: no user message with text');
    const tools = request.tools ?? [];
    const choice = request.tool_choice;
    if (tools.length > 0 && choice !== 'none') return this.callTool(request, text, session);
    if (request.response_format?.type === 'json_schema')
      return this.structured(request.response_format.json_schema.schema, text, session);
    throw ERRORS.unsupportedRequest(UNSUPPORTED);
  }

  private async structured(schema: Record<string, unknown>, text: string, session: Session): Promise<ChatCompletion> {
    const fields = fieldsOf(schema);
    const excerpt = await this.extract.read(session, text, fields);
    const { data, tokens } = await this.extract.fill(session, excerpt, fields);
    const content = JSON.stringify(data);
    return this.completion({ role: 'assistant', content }, 'stop', tokens, content);
  }

  private async callTool(request: ChatRequest, text: string, session: Session): Promise<ChatCompletion> {
    const tools = request.tools!;
    const choice = request.tool_choice;
    const named = typeof choice === 'object' ? choice.function.name : undefined;
    if (named !== undefined && !tools.some((t) => t.function.name === named)) {
      throw ERRORS.invalidRequest(`tool_choice.function.name: no tool named ${JSON.stringify(named)} in tools`);
    }
    // Schemas are checked before any inference, so a bad one costs nothing.
    const fieldsFor = (t: (typeof tools)[number]) => {
      const p = t.function.parameters;
      return p && typeof p.properties === 'object' && p.properties !== null && Object.keys(p.properties).length > 0
        ? fieldsOf(p)
        : [];
    };
    const fields = new Map(tools.map((t) => [t.function.name, fieldsFor(t)]));
    const excerpt = await this.toolArguments.read(session, text, [...fields.values()].flat());

    let name = named ?? tools[0]!.function.name;
    let tokens = 0;
    // 'auto' and 'required' both pick the best tool: this service decides, it does not chat.
    if (named === undefined && tools.length > 1) {
      const labels = tools.map((t) =>
        t.function.description
          ? { name: t.function.name, description: t.function.description }
          : { name: t.function.name },
      );
      const {
        results: [decided],
        cost: [cost],
      } = await this.classify.classified(session, [text], labels);
      name = decided!.label;
      tokens += cost!.promptTokens;
    }
    const wanted = fields.get(name)!;
    const filled =
      wanted.length === 0 ? { data: {}, tokens: 0 } : await this.toolArguments.fill(session, excerpt, wanted);
    const args = filled.data;
    tokens += filled.tokens;

    const call: ToolCall = {
      id: `call_${randomBytes(12).toString('hex')}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
    };
    return this.completion(
      { role: 'assistant', content: null, tool_calls: [call] },
      'tool_calls',
      tokens,
      `${name}${call.function.arguments}`,
    );
  }

  private completion(
    message: ChatCompletion['choices'][number]['message'],
    finish: 'stop' | 'tool_calls',
    promptTokens: number,
    output: string,
  ): ChatCompletion {
    const completionTokens = this.engine.tokenize(output).length;
    return {
      id: `chatcmpl-${randomBytes(12).toString('hex')}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: MODEL_ID,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  }
}

/** Only user messages are read: string content as is, text parts joined by newlines, turns by blank lines. */
function userText(messages: Static<typeof ChatMessage>[]): string {
  return messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content
              .filter((p) => typeof p.text === 'string')
              .map((p) => p.text)
              .join('\n')
          : '',
    )
    .filter((t) => t.trim() !== '')
    .join('\n\n');
}

/** The same completion as server-sent events: one chunk, then [DONE]. */
export function streamOf(c: ChatCompletion): string {
  const choice = c.choices[0]!;
  const delta = {
    role: 'assistant',
    content: choice.message.content,
    ...(choice.message.tool_calls
      ? { tool_calls: choice.message.tool_calls.map((t, index) => ({ index, ...t })) }
      : {}),
  };
  const chunk = {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model: c.model,
    choices: [{ index: 0, delta, finish_reason: choice.finish_reason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
