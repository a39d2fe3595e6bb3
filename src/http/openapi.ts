// /openapi.json, generated from the same TypeBox schemas the routes validate with.
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
import { TranscriptionResponse } from '../api/transcription.js';
import { FeedbackRequest, FeedbackResponse, HeadList } from '../api/feedback.js';
import { Type } from '@sinclair/typebox';
import { addOperations } from './openapi-operations.js';
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
  'rate_limit_exceeded: the key used its requests (each item of texts, statements, questions or states counts one) or its input tokens for this minute';
const RETRY_AFTER = { 'retry-after': { description: 'seconds until the window resets', schema: { type: 'integer' } } };

const RETRY = {
  'x-should-retry': {
    description: 'true when retrying may succeed (OpenAI SDKs obey it)',
    schema: { type: 'string', enum: ['true', 'false'] },
  },
};

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
  const error = (description: string, headers: Json = {}) => ({
    description,
    headers: { ...RETRY, ...headers },
    content: { 'application/json': { schema: hoist(ErrorBody) } },
  });
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
          400: error(
            'invalid_request (or invalid_schema for extract); a request over a limit of info.description, named in the message',
          ),
          413: error('payload_too_large'),
          502: error('runner_error: inference failed twice; retry with backoff (x-should-retry: true)'),
          529: error(
            'overloaded: all inference slots busy; retry with exponential backoff and jitter, at most three attempts; lower concurrency when frequent (x-should-retry: true)',
          ),
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
        400: error('invalid_request, invalid_schema or unsupported_request'),
        404: error('model_not_found'),
        413: error('payload_too_large'),
        502: error('runner_error: inference failed twice; retry with backoff (x-should-retry: true)'),
        529: error('overloaded: all inference slots busy; retry with backoff (x-should-retry: true)'),
      },
    },
  };
  // System One: validation failures are 422 `detail[]`; other errors `detail{}`; both keep `error`.
  const wire = (description: string, schema: unknown = SystemOneErrorBody, headers: Json = {}) => ({
    description,
    headers: { ...RETRY, ...headers },
    content: { 'application/json': { schema: hoist(schema) } },
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
          404: wire(`model_not_found: a model other than ${SYSTEM_ONE_MODELS.map((m) => `"${m}"`).join(' or ')}`),
          413: error('payload_too_large'),
          422: wire(
            'a bad request (invalid JSON, a field out of its bounds, an image): FastAPI-style detail[] locating the field',
            ValidationErrorBody,
          ),
          502: wire('runner_error: inference failed twice; retry with backoff'),
          529: wire('overloaded: all inference slots busy; retry with backoff'),
          ...(access.keys ? { 401: wire('authentication_error: missing_api_key or invalid_api_key') } : {}),
          ...(access.rateLimit || access.tokenLimit ? { 429: wire(LIMITED, SystemOneErrorBody, RETRY_AFTER) } : {}),
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
          400: error(
            'invalid_request or unsupported_request: empty, undecodable or over-long audio, a bad diarize value',
          ),
          413: error('payload_too_large'),
          415: error('unsupported_media_type: Content-Type is not audio/* or application/octet-stream'),
          502: error('runner_error; retry with backoff (x-should-retry: true)'),
          529: error('overloaded; retry with backoff (x-should-retry: true)'),
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
        400: error('invalid_request: the field at fault named (a label off the set, a level off the scale...)'),
        404: error("decision_not_found: unknown, another organization's, or older than the retention"),
        413: error('payload_too_large'),
        503: error('store_unavailable: the database is away; nothing was stored'),
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
        404: error('model_not_found'),
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
  addOperations(paths, access, error);
  for (const [path, item] of Object.entries(paths))
    if (path.startsWith('/v1/')) for (const op of Object.values(item as Json)) guarded(op as Json, access, error);
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
function guarded(op: Json, access: AccessPolicy, error: (description: string, headers?: Json) => Json): void {
  const responses = op.responses as Json;
  // An operation with its own error shape (System One) documents its 401 and 429 itself.
  if (access.keys)
    responses[401] ??= error(
      'missing_api_key (no bearer header) or invalid_api_key (malformed, unknown or revoked key)',
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
  if (access.rateLimit || access.tokenLimit) responses[429] ??= error(LIMITED, RETRY_AFTER);
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
