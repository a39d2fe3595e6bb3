// /openapi.json, generated from the same TypeBox schemas the routes validate with.
import { ErrorBody } from '../api/common.js';
import { CAPABILITIES, CAPABILITY_PREFIX, Model, ModelList } from '../api/capabilities.js';
import { ChatCompletionRequest, ChatCompletionResponse } from '../api/chat.js';

type Json = Record<string, unknown>;

export function openapiDocument(version: string): Json {
  const components: Record<string, Json> = {};
  const hoist = (schema: unknown) => refs(JSON.parse(JSON.stringify(schema)), components);
  const error = (description: string) => ({ description, content: { 'application/json': { schema: hoist(ErrorBody) } } });
  const paths: Json = {};
  for (const [name, c] of Object.entries(CAPABILITIES)) {
    paths[`${CAPABILITY_PREFIX}/${name}`] = {
      post: {
        operationId: name,
        summary: c.summary,
        requestBody: { required: true, content: { 'application/json': { schema: hoist(c.request) } } },
        responses: {
          200: {
            description: 'the decision; `texts` (and lists of statements or questions) give `{ results }` in input order',
            headers: {
              'x-input-chars': { description: 'input characters', schema: { type: 'integer' } },
              'x-input-tokens': { description: 'input tokens billed for this call', schema: { type: 'integer' } },
            },
            content: { 'application/json': { schema: hoist(c.response) } },
          },
          400: error('invalid_request (or invalid_schema for extract)'),
          413: error('payload_too_large'),
          502: error('runner_error: inference failed twice'),
          529: error('overloaded: all inference slots busy; retry with backoff'),
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
          description: 'one choice; with stream: true, one chat.completion.chunk event then data: [DONE] (text/event-stream)',
          content: { 'application/json': { schema: hoist(ChatCompletionResponse) }, 'text/event-stream': { schema: { type: 'string' } } },
        },
        400: error('invalid_request, invalid_schema or unsupported_request'),
        404: error('model_not_found'),
        529: error('overloaded'),
      },
    },
  };
  paths['/v1/models'] = { get: { operationId: 'listModels', responses: { 200: { description: 'the one model', content: { 'application/json': { schema: hoist(ModelList) } } } } } };
  paths['/v1/models/{id}'] = {
    get: {
      operationId: 'retrieveModel',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: { description: 'the model', content: { 'application/json': { schema: hoist(Model) } } }, 404: error('model_not_found') },
    },
  };
  return {
    openapi: '3.1.1',
    info: { title: 'decision-machine-1', version: '1.0.0', description: `Typed decisions over text. Service build ${version}.` },
    paths,
    components: { schemas: components },
  };
}

// Schemas with an $id move to components and are referenced; TypeBox's bare `$ref: "Name"`
// (recursive trees) becomes a JSON pointer into components.
function refs(node: unknown, components: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((n) => refs(n, components));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v}` : refs(v, components);
  if (typeof out.$id === 'string') {
    const id = out.$id;
    delete out.$id;
    components[id] = out;
    return { $ref: `#/components/schemas/${id}` };
  }
  return out;
}
