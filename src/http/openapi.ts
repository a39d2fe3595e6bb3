// /openapi.json, generated from the same TypeBox schemas the routes validate with, its error
// responses from the error catalogue (src/errors.ts).
import { ErrorBody, MAX_DECISIONS } from '../api/common.js';
import { MAX_ENUM, MAX_FIELDS, MAX_PROPERTIES, MAX_SCHEMA_DEPTH } from '../decisions/schema-fields.js';
import { MAX_TREE_DEPTH } from '../api/classify-tree.js';
import { MAX_LABELS } from '../api/classify.js';
import { REQUEST_CONTEXTS } from '../engine/engine.js';
import { DEFAULTS } from '../config.js';
import { CAPABILITY_PREFIX } from '../api/capability.js';
import { Model, ModelList, SYSTEM_ONE_MODELS } from '../api/models.js';
import { CAPABILITIES } from '../decisions/capabilities.js';
import { ChatCompletionRequest, ChatCompletionResponse } from '../api/chat.js';
import {
  SYSTEM_ONE_BATCH_PATH,
  SYSTEM_ONE_PATH,
  SystemOneBatchRequest,
  SystemOneBatchResponse,
  SystemOneErrorBody,
  SystemOneRequest,
  SystemOneResponse,
  ValidationErrorBody,
} from '../api/systemone.js';
import { systemOneErrorType, systemOneStatus } from '../api/systemone-errors.js';
import { CODES, type ErrorCode } from '../errors.js';
import { TranscriptionResponse } from '../api/transcription.js';
import { FeedbackRequest, FeedbackResponse, HeadList } from '../api/feedback.js';
import { Type } from '@sinclair/typebox';
import { addErrors, addOperations, type ErrorNotes, type ErrorResponses } from './openapi-operations.js';
import { HEAD_CAPABILITIES } from '../heads/signature.js';

type Json = Record<string, unknown>;

/** What this deployment enforces and serves: the document says exactly what the running service does. */
export interface AccessPolicy {
  keys: boolean;
  rateLimit: boolean;
  /** Input tokens per minute per key (x-ratelimit-*-tokens). */
  tokenLimit?: boolean;
  /** POST /v1/audio/transcribe is served (a whisper model is loaded). */
  audio?: boolean;
}

const INFERENCE_MS = {
  'x-inference-ms': {
    description: "the decision's time on the server, ms (waiting for a slot included)",
    schema: { type: 'integer' },
  },
};

// One or the other (a single result, a batch), and neither when decisions are not kept.
const DECISION_IDS = {
  'x-decision-id': {
    description: 'the id to correct this decision with (POST .../feedback), when decisions are kept',
    required: false,
    schema: { type: 'string' },
  },
  'x-decision-ids': {
    description: "a batch's decision ids, in result order, comma-separated",
    required: false,
    schema: { type: 'string' },
  },
};

const LIMITED =
  'the key used its requests (each item of texts, statements, questions or states counts one) or its input tokens for this minute (x-should-retry false when the call alone counts more than the limit: split it)';
const RETRY_AFTER = { 'retry-after': { description: 'seconds to wait before retrying', schema: { type: 'integer' } } };

/** x-should-retry as the catalogue has it for a response's codes. */
function shouldRetry(codes: ErrorCode[]): Json {
  const values = [...new Set(codes.map((c) => CODES[c].retry))];
  const description =
    values.length > 1
      ? 'true when retrying may succeed'
      : values[0]
        ? 'true: retrying may succeed'
        : 'false: the same request fails the same way again';
  return {
    'x-should-retry': {
      description: `${description} (OpenAI SDKs obey it)`,
      schema: { type: 'string', enum: ['true', 'false'] },
    },
  };
}

interface ErrorShape {
  /** The body of an error response of `status`. */
  schema(status: number): unknown;
  /** The status a code is sent with: the catalogue's, unless the wire says otherwise. */
  status?(code: ErrorCode): number;
  /** How a code is named in a description: the code, unless the wire names it too. */
  name?(code: ErrorCode): string;
}

/**
 * An operation's error responses, generated from the catalogue (src/errors.ts): each code under
 * its status, described by its name and what it means on this operation (`notes`), with
 * x-should-retry as the catalogue has it and Retry-After for a code that sends it.
 */
function errorResponses(notes: ErrorNotes, shape: ErrorShape): Json {
  const { status = (code) => CODES[code].status, name = (code) => code } = shape;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(notes) as ErrorCode[])
    byStatus.set(status(code), [...(byStatus.get(status(code)) ?? []), code]);
  const out: Json = {};
  for (const [at, codes] of byStatus) {
    out[at] = {
      description: codes.map((c) => (notes[c] ? `${name(c)}: ${notes[c]}` : name(c))).join('; '),
      headers: { ...shouldRetry(codes), ...(codes.some((c) => CODES[c].retryAfter) ? RETRY_AFTER : {}) },
      content: { 'application/json': { schema: shape.schema(at) } },
    };
  }
  return out;
}

/** Limits checked before any model work; a request over one gets 400 invalid_request naming it. */
function limits(requestTokens: number): string {
  return (
    `Limits: texts x statements (yes-no) or texts x questions (answer) at most ${MAX_DECISIONS} decisions; ` +
    `labels, entity types and tree labels per level at most ${MAX_LABELS}, trees at most ${MAX_TREE_DEPTH} levels; ` +
    `extract and chat schemas at most ${MAX_FIELDS} fields, ${MAX_PROPERTIES} properties, ${MAX_ENUM} values per enum, objects ${MAX_SCHEMA_DEPTH} deep; ` +
    `one request has the model read at most ${requestTokens} tokens in all (texts as read, statements, labels, options), ` +
    'its time bound at the machine\'s prefill rate (see the README, "Limits").'
  );
}

export function openapiDocument(
  version: string,
  access: AccessPolicy = { keys: false, rateLimit: false },
  requestTokens = REQUEST_CONTEXTS * DEFAULTS.contextSize,
): Json {
  const components: Record<string, Json> = {};
  const hoist = (schema: unknown) => refs(JSON.parse(JSON.stringify(schema)), components);
  const errors: ErrorResponses = (notes) => errorResponses(notes, { schema: () => hoist(ErrorBody) });
  const paths: Json = {};
  for (const c of CAPABILITIES) {
    paths[`${CAPABILITY_PREFIX}/${c.name}`] = {
      post: {
        operationId: c.name,
        summary: c.summary,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: hoist(c.request), example: c.example } },
        },
        responses: {
          200: {
            description:
              'the decision; `texts` (and lists of statements or questions) give `{ results }` in input order',
            headers: {
              'x-input-chars': { description: 'input characters', schema: { type: 'integer' } },
              'x-input-tokens': { description: 'input tokens billed for this call', schema: { type: 'integer' } },
              ...INFERENCE_MS,
              ...((HEAD_CAPABILITIES as readonly string[]).includes(c.name) ? DECISION_IDS : {}),
            },
            content: { 'application/json': { schema: hoist(c.response) } },
          },
          ...errors({
            invalid_request: 'a request over a limit of info.description, named in the message',
            invalid_schema: 'for extract',
            payload_too_large: '',
            runner_error: 'inference failed twice; retry with backoff',
            overloaded:
              'all inference slots busy; retry with exponential backoff and jitter, at most three attempts; lower concurrency when frequent',
          }),
        },
      },
    };
  }
  paths['/v1/chat/completions'] = {
    post: {
      operationId: 'createChatCompletion',
      summary: 'Structured extraction (response_format.json_schema) or function calling (tools); plain chat is refused',
      requestBody: { required: true, content: { 'application/json': { schema: hoist(ChatCompletionRequest) } } },
      responses: {
        200: {
          description:
            'one choice; with stream: true, one chat.completion.chunk event then data: [DONE] (text/event-stream)',
          headers: {
            'x-input-tokens': { description: 'input tokens billed (usage.prompt_tokens)', schema: { type: 'integer' } },
            ...INFERENCE_MS,
          },
          content: {
            'application/json': { schema: hoist(ChatCompletionResponse) },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        ...errors({
          invalid_request: '',
          invalid_schema: '',
          unsupported_request: '',
          model_not_found: '',
          payload_too_large: '',
          runner_error: 'inference failed twice; retry with backoff',
          overloaded: 'all inference slots busy; retry with backoff',
        }),
      },
    },
  };
  // System One: validation failures are 422 `detail[]`; other errors `detail{}` (its error_type
  // named beside the code); both keep `error`.
  const wire = (notes: ErrorNotes) =>
    errorResponses(notes, {
      schema: (status) => hoist(status === 422 ? ValidationErrorBody : SystemOneErrorBody),
      status: systemOneStatus,
      name: (code) => (systemOneStatus(code) === 422 ? code : `${code} (${systemOneErrorType(code)})`),
    });
  for (const [path, request, response, operationId, summary] of [
    [
      SYSTEM_ONE_PATH,
      SystemOneRequest,
      SystemOneResponse,
      'systemOne',
      'System One: named noul, choice and score questions about one state, answered over one reading of it',
    ],
    [
      SYSTEM_ONE_BATCH_PATH,
      SystemOneBatchRequest,
      SystemOneBatchResponse,
      'systemOneBatch',
      'System One over several states: one result per state, in order',
    ],
  ] as const) {
    paths[path] = {
      post: {
        operationId,
        summary,
        requestBody: { required: true, content: { 'application/json': { schema: hoist(request) } } },
        responses: {
          200: {
            description: 'the answers, per question id',
            headers: {
              'x-input-chars': { description: 'input characters', schema: { type: 'integer' } },
              'x-input-tokens': {
                description: 'input tokens billed (usage.input_tokens)',
                schema: { type: 'integer' },
              },
              ...INFERENCE_MS,
            },
            content: { 'application/json': { schema: hoist(response) } },
          },
          ...wire({
            model_not_found: `a model other than ${SYSTEM_ONE_MODELS.map((m) => `"${m}"`).join(' or ')}`,
            payload_too_large: '',
            invalid_request:
              'a bad request (invalid JSON, a field out of its bounds, an image): FastAPI-style detail[] locating the field',
            runner_error: 'inference failed twice; retry with backoff',
            overloaded: 'all inference slots busy; retry with backoff',
            ...(access.keys ? { missing_api_key: '', invalid_api_key: '' } : {}),
            ...(access.rateLimit || access.tokenLimit ? { rate_limit_exceeded: LIMITED } : {}),
          }),
        },
      },
    };
  }
  if (access.audio) {
    paths['/v1/audio/transcribe'] = {
      post: {
        operationId: 'transcribe',
        summary: 'Transcript with word times, and speaker labels with diarize=true; the body is the raw audio file',
        parameters: [{ name: 'diarize', in: 'query', required: false, schema: { type: 'boolean', default: false } }],
        requestBody: {
          required: true,
          content: {
            'audio/*': { schema: { type: 'string', format: 'binary' } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: {
          200: {
            description: 'the transcript',
            headers: {
              'x-input-tokens': { description: 'input tokens billed (from the duration)', schema: { type: 'integer' } },
              'x-inference-ms': { description: 'model processing time, ms', schema: { type: 'integer' } },
            },
            content: { 'application/json': { schema: hoist(TranscriptionResponse) } },
          },
          ...errors({
            invalid_request: 'empty, undecodable or over-long audio, a bad diarize value',
            unsupported_request: '',
            payload_too_large: '',
            unsupported_media_type: 'Content-Type is not audio/* or application/octet-stream',
            runner_error: 'retry with backoff',
            overloaded: 'retry with backoff',
          }),
        },
      },
    };
  }
  const Models = Type.Object({
    ...ModelList.properties,
    models: Type.Array(Type.Object({ name: Type.String(), description: Type.String(), release_date: Type.String() }), {
      description: 'the names System One clients may send as `model`',
    }),
  });
  paths['/v1/models'] = {
    get: {
      operationId: 'listModels',
      responses: {
        200: {
          description: 'the one model: `data` for OpenAI clients, `models` for System One clients',
          content: { 'application/json': { schema: hoist(Models) } },
        },
      },
    },
  };
  paths[`${CAPABILITY_PREFIX}/feedback`] = {
    post: {
      operationId: 'feedback',
      summary: 'Correct a decision: its head is refitted from the corrections (docs/operations.md)',
      requestBody: { required: true, content: { 'application/json': { schema: hoist(FeedbackRequest) } } },
      responses: {
        202: { description: 'stored', content: { 'application/json': { schema: hoist(FeedbackResponse) } } },
        ...errors({
          invalid_request: 'the field at fault named (a label off the set, a level off the scale...)',
          decision_not_found: "unknown, another organization's, or older than the retention",
          payload_too_large: '',
          store_unavailable: 'the database is away; nothing was stored',
        }),
      },
    },
  };
  paths['/v1/heads'] = {
    get: {
      operationId: 'listHeads',
      summary: "The heads that decide the caller's requests, with their live accuracy",
      responses: { 200: { description: 'the heads', content: { 'application/json': { schema: hoist(HeadList) } } } },
    },
  };
  paths['/v1/models/{id}'] = {
    get: {
      operationId: 'retrieveModel',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'the model', content: { 'application/json': { schema: hoist(Model) } } },
        ...errors({ model_not_found: '' }),
      },
    },
  };
  const service = {
    type: 'object',
    required: ['name', 'version', 'links'],
    properties: { name: { type: 'string' }, version: { type: 'string' }, links: { type: 'object' } },
  };
  paths['/'] = {
    get: {
      operationId: 'describeService',
      security: [],
      summary: 'Service name, version and links',
      responses: { 200: { description: 'the service', content: { 'application/json': { schema: service } } } },
    },
  };
  paths['/openapi.json'] = {
    get: {
      operationId: 'openapiDocument',
      security: [],
      summary: 'This document',
      responses: {
        200: { description: 'OpenAPI 3.1.1', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  };
  addOperations(paths, access, errors);
  for (const [path, item] of Object.entries(paths))
    if (path.startsWith('/v1/')) for (const op of Object.values(item as Json)) guarded(op as Json, access, errors);
  return {
    openapi: '3.1.1',
    info: {
      title: 'decision-machine-1',
      version: '1.0.0',
      description: `Typed decisions over text and speech. Service build ${version}.${access.keys ? '' : ' Key checking is off on this deployment: the bearer key is optional.'} ${limits(requestTokens)}`,
    },
    // Public routes override this with `security: []`. Off, the empty requirement makes the key optional.
    security: access.keys ? [{ bearerAuth: [] }] : [{}, { bearerAuth: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'API key `test_sk-{organization}-{secret}` or `prod_sk-{organization}-{secret}`, issued by the operator',
        },
      },
    },
  };
}

// The responses the gate adds to every /v1 operation, when this deployment enforces them.
function guarded(op: Json, access: AccessPolicy, errors: ErrorResponses): void {
  const responses = op.responses as Json;
  // An operation with its own error shape (System One) documents its 401 and 429 itself.
  if (access.keys)
    addErrors(
      responses,
      errors({ missing_api_key: 'no bearer header', invalid_api_key: 'malformed, unknown or revoked key' }),
    );
  const ok = (responses[200] ?? responses[202]) as Json;
  if (access.rateLimit) {
    ok.headers = {
      ...(ok.headers as Json),
      'x-ratelimit-limit-requests': { description: "the key's requests per minute", schema: { type: 'integer' } },
      'x-ratelimit-remaining-requests': { description: 'requests left in this minute', schema: { type: 'integer' } },
      'x-ratelimit-reset-requests': {
        description: 'time until the minute window resets, e.g. `17s`',
        schema: { type: 'string' },
      },
    };
  }
  if (access.tokenLimit) {
    ok.headers = {
      ...(ok.headers as Json),
      'x-ratelimit-limit-tokens': { description: "the key's input tokens per minute", schema: { type: 'integer' } },
      'x-ratelimit-remaining-tokens': {
        description: 'input tokens left in this minute, after this call',
        schema: { type: 'integer' },
      },
      'x-ratelimit-reset-tokens': {
        description: 'time until the minute window resets, e.g. `17s`',
        schema: { type: 'string' },
      },
    };
  }
  if (access.rateLimit || access.tokenLimit) addErrors(responses, errors({ rate_limit_exceeded: LIMITED }));
}

// Schemas with an $id move to components and are referenced; TypeBox's bare `$ref: "Name"`
// (recursive trees) becomes a JSON pointer into components.
function refs(node: unknown, components: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((n) => refs(n, components));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node))
    out[k] =
      k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v}` : refs(v, components);
  if (typeof out.$id === 'string') {
    const id = out.$id;
    delete out.$id;
    components[id] = out;
    return { $ref: `#/components/schemas/${id}` };
  }
  return out;
}
