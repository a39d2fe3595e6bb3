// POST /v1/systemone and /v1/systemone/batch: the System One wire over the same engine, keys,
// limits and ledger as every /v1 route. Errors (the gate's included) take the wire's shapes.
import { ServiceError } from '../errors.js';
import {
  SYSTEM_ONE_BATCH_PATH,
  SYSTEM_ONE_MODELS,
  SYSTEM_ONE_PATH,
  ValidationFailed,
  IMAGES_UNSUPPORTED,
  systemOneError,
  validateSystemOne,
} from '../api/systemone.js';
import type { SystemOne } from '../decisions/systemone.js';
import { MODEL_ID } from '../api/capabilities.js';
import { parseJson } from './json.js';
import type { ApiRequest, Route } from './types.js';

export function systemOneRoutes(systemOne: SystemOne): Route[] {
  return [
    {
      method: 'post',
      path: SYSTEM_ONE_PATH,
      handler: async (req) => {
        const input = validateSystemOne(body(req));
        checkModel(input.model);
        const started = performance.now();
        const out = await systemOne.run([input.state], input.questions, req.signal);
        return reply({ model: MODEL_ID, answers: out.body[0], usage: usage(out.inputTokens) }, out, started);
      },
    },
    {
      method: 'post',
      path: SYSTEM_ONE_BATCH_PATH,
      handler: async (req) => {
        const input = validateSystemOne(body(req), true);
        checkModel(input.model);
        const started = performance.now();
        const out = await systemOne.run(input.states, input.questions, req.signal);
        return reply(
          { model: MODEL_ID, results: out.body.map((answers) => ({ answers })), usage: usage(out.inputTokens) },
          out,
          started,
        );
      },
    },
  ];
}

/** Wraps a gated System One route so every error it raises takes the wire's shape. */
export function systemOneErrors(route: Route): Route {
  return {
    ...route,
    handler: async (req) => {
      try {
        return await route.handler(req);
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        return systemOneError(err);
      }
    },
  };
}

export function isSystemOnePath(path: string): boolean {
  return path === SYSTEM_ONE_PATH || path === SYSTEM_ONE_BATCH_PATH;
}

function body(req: ApiRequest): unknown {
  // typesafe-sdk sends images as multipart/form-data parts.
  if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/')) {
    throw new ValidationFailed([{ loc: ['body'], msg: IMAGES_UNSUPPORTED, type: 'value_error' }]);
  }
  try {
    return parseJson(req);
  } catch (err) {
    if (err instanceof ServiceError)
      throw new ValidationFailed([{ loc: ['body'], msg: err.message.replace(/^body: /, ''), type: 'json_invalid' }]);
    throw err;
  }
}

function checkModel(model: string): void {
  if (!(SYSTEM_ONE_MODELS as readonly string[]).includes(model)) {
    throw new ServiceError(
      'model_not_found',
      `model ${JSON.stringify(model)} not found; use ${SYSTEM_ONE_MODELS.map((m) => `"${m}"`).join(' or ')}`,
    );
  }
}

function usage(inputTokens: number) {
  return { input_tokens: inputTokens, output_tokens: 0 };
}

function reply(body: unknown, out: { inputChars: number; inputTokens: number }, started: number) {
  return {
    status: 200,
    body,
    headers: {
      'x-input-chars': String(out.inputChars),
      'x-input-tokens': String(out.inputTokens),
      'x-inference-ms': String(Math.round(performance.now() - started)),
    },
  };
}
