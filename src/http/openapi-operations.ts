// The operational parts of /openapi.json (src/http/openapi.ts calls this once): the public
// probes GET /health and GET /ready, OpenAI's multipart POST /v1/audio/transcriptions when a
// whisper model is loaded, and on every /v1 POST the refusals of src/http/deadline.ts (504),
// the drain (503) and, with keys on, the per-key in-flight cap (429).
import type { ErrorCode } from '../errors.js';
import { RESPONSE_FORMATS } from './transcriptions.js';
import { TIMEOUT_HEADER } from './deadline.js';

type Json = Record<string, unknown>;
/** What an operation's error codes mean on it: code -> a note ('' when the code says it all). */
export type ErrorNotes = Partial<Record<ErrorCode, string>>;
/** An operation's error responses by status, generated from the catalogue (src/http/openapi.ts). */
export type ErrorResponses = (notes: ErrorNotes) => Json;

/** Adds the error responses an operation does not document yet (its own, in its shape, win). */
export function addErrors(responses: Json, errors: Json): void {
  for (const [status, response] of Object.entries(errors)) responses[status] ??= response;
}

export function addOperations(paths: Json, access: { keys: boolean; audio?: boolean }, errors: ErrorResponses): void {
  if (access.audio) paths['/v1/audio/transcriptions'] = { post: transcriptions(errors) };
  for (const [path, item] of Object.entries(paths)) {
    const post = (item as Json).post as Json | undefined;
    // System One routes answer in their own error shape and document it themselves.
    if (!path.startsWith('/v1/') || !post || path.startsWith('/v1/systemone')) continue;
    post.parameters = [
      ...((post.parameters as Json[] | undefined) ?? []),
      {
        name: TIMEOUT_HEADER,
        in: 'header',
        required: false,
        description:
          "a deadline for this request, ms, below the server's (DM_REQUEST_TIMEOUT_MS); past it the work is cancelled and the reply is 504",
        schema: { type: 'integer', minimum: 1 },
      },
    ];
    const responses = post.responses as Json;
    addErrors(
      responses,
      errors({
        not_ready: 'the model is still loading or the process is draining',
        store_unavailable: 'the key cannot be checked, or usage recorded, while the database is away',
        timeout: `the request passed its deadline (DM_REQUEST_TIMEOUT_MS or ${TIMEOUT_HEADER}); its work was cancelled`,
        ...(access.keys && {
          rate_limit_exceeded:
            'the key already has DM_KEY_MAX_INFLIGHT requests in flight, or used its requests or input tokens for this minute',
        }),
      }),
    );
  }
  const probe = (operationId: string, summary: string, ok: string, unavailable?: ErrorNotes) => ({
    get: {
      operationId,
      security: [],
      summary,
      responses: {
        200: { description: ok, content: { 'application/json': { schema: { type: 'object' } } } },
        ...(unavailable && errors(unavailable)),
      },
    },
  });
  paths['/health'] = probe(
    'health',
    'Liveness: the process runs (answers while the model loads)',
    'alive; `phase` is loading, ready or draining',
  );
  paths['/ready'] = probe('ready', 'Readiness: requests are admitted', 'ready', {
    not_ready: 'the model is still loading, or the process is draining for a stop',
    store_unavailable: 'the database has not answered since start-up',
  });
}

function transcriptions(errors: ErrorResponses): Json {
  const word = {
    type: 'object',
    properties: { word: { type: 'string' }, start: { type: 'number' }, end: { type: 'number' } },
  };
  return {
    operationId: 'createTranscription',
    summary: "OpenAI's transcription form on the same engine as /v1/audio/transcribe",
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file', 'model'],
            properties: {
              file: {
                type: 'string',
                format: 'binary',
                description: 'the audio file (mp3, m4a, wav, ogg, opus, flac, webm)',
              },
              model: { type: 'string', description: 'any id (e.g. whisper-1): the loaded whisper model answers' },
              language: { type: 'string', description: 'ISO-639-1 code; DM_AUDIO_LANGUAGE when absent' },
              prompt: { type: 'string', description: 'accepted, not applied' },
              temperature: {
                type: 'number',
                minimum: 0,
                maximum: 1,
                description: 'accepted, not applied (greedy decoding)',
              },
              response_format: { type: 'string', enum: [...RESPONSE_FORMATS], default: 'json' },
              'timestamp_granularities[]': {
                type: 'array',
                items: { type: 'string', enum: ['word', 'segment'] },
                description: 'with response_format verbose_json; segment when absent',
              },
              stream: { type: 'boolean', enum: [false] },
            },
          },
        },
      },
    },
    responses: {
      200: {
        description:
          'json: `{ text }`; verbose_json: task, language, duration, text, segments and/or words; text, srt, vtt: the transcript as text',
        headers: {
          'x-input-tokens': { description: 'input tokens billed (from the duration)', schema: { type: 'integer' } },
          'x-inference-ms': { description: 'model processing time, ms', schema: { type: 'integer' } },
        },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['text'],
              properties: {
                text: { type: 'string' },
                task: { type: 'string' },
                language: { type: ['string', 'null'] },
                duration: { type: 'number' },
                segments: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      id: { type: 'integer' },
                      start: { type: 'number' },
                      end: { type: 'number' },
                      text: { type: 'string' },
                    },
                  },
                },
                words: { type: 'array', items: word },
              },
            },
          },
          'text/plain': { schema: { type: 'string' } },
          'text/vtt': { schema: { type: 'string' } },
          'application/x-subrip': { schema: { type: 'string' } },
        },
      },
      ...errors({
        invalid_request:
          'a malformed form, or a field missing, unknown, sent twice, too long or invalid (named in the message)',
        payload_too_large: 'the file is larger than DM_AUDIO_MAX_BYTES, or the audio longer than DM_AUDIO_MAX_SECONDS',
        unsupported_media_type: 'Content-Type is not multipart/form-data',
        runner_error: 'retry with backoff',
        overloaded: 'retry with backoff',
      }),
    },
  };
}
