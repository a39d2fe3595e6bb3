// POST /v1/systemone and /v1/systemone/batch: the System One wire over the same engine, keys,
// limits and ledger as every /v1 route. The routes pick the wire's dialects: validation in
// FastAPI's 422 detail[] (compile() with SYSTEM_ONE_DIALECT), every other error (the gate's
// included) in detail{} (systemOneError, written by the transport).
import type { Engine } from '../engine/engine.js';
import { ERRORS, ServiceError } from '../errors.js';
import {
  SYSTEM_ONE_BATCH_PATH,
  SYSTEM_ONE_PATH,
  SystemOneBatchRequest,
  SystemOneRequest,
  IMAGES_UNSUPPORTED,
} from '../api/systemone.js';
import { SYSTEM_ONE_DIALECT, ValidationError, systemOneError } from '../api/systemone-errors.js';
import { compile } from '../api/validate.js';
import type { BilledBody } from '../decisions/billing.js';
import type { SystemOne } from '../decisions/systemone.js';
import { MODEL_ID, SYSTEM_ONE_MODELS } from '../api/models.js';
import { parseJson } from './json.js';
import { itemsOf, modelRoute, type ModelReply } from './model-route.js';
import type { ApiRequest, Route } from './types.js';
import { systemOneDrafts } from '../feedback/kept.js';

export function systemOneRoutes(systemOne: SystemOne, engine: Engine): Route[] {
  const single = compile(SystemOneRequest, { dialect: SYSTEM_ONE_DIALECT.single });
  const batch = compile(SystemOneBatchRequest, { dialect: SYSTEM_ONE_DIALECT.batch });
  // Each question counts one request against the key's limit, as each statement does; so does each state.
  const wire = { cost: itemsOf('questions', 'states'), errors: systemOneError };
  return [
    modelRoute(engine, {
      ...wire,
      path: SYSTEM_ONE_PATH,
      read: (req) => checkModel(single(body(req))),
      run: async (input, session) => {
        const out = await systemOne.run([input.state], input.questions, session);
        const decisions = systemOneDrafts([input.state], input.questions, out.body, false);
        return { ...reply({ model: MODEL_ID, answers: out.body[0], usage: usage(out.inputTokens) }, out), decisions };
      },
    }),
    modelRoute(engine, {
      ...wire,
      path: SYSTEM_ONE_BATCH_PATH,
      read: (req) => checkModel(batch(body(req))),
      run: async (input, session) => {
        const out = await systemOne.run(input.states, input.questions, session);
        const results = out.body.map((answers) => ({ answers }));
        const decisions = systemOneDrafts(input.states, input.questions, out.body, true);
        return { ...reply({ model: MODEL_ID, results, usage: usage(out.inputTokens) }, out), decisions };
      },
    }),
  ];
}

function body(req: ApiRequest): unknown {
  // typesafe-sdk sends images as multipart/form-data parts.
  if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/')) {
    throw new ValidationError([{ loc: ['body'], msg: IMAGES_UNSUPPORTED, type: 'value_error' }]);
  }
  try {
    return parseJson(req);
  } catch (err) {
    if (err instanceof ServiceError)
      throw new ValidationError([{ loc: ['body'], msg: err.message.replace(/^body: /, ''), type: 'json_invalid' }]);
    throw err;
  }
}

function checkModel<T extends { model: string }>(input: T): T {
  if (!(SYSTEM_ONE_MODELS as readonly string[]).includes(input.model)) {
    throw ERRORS.modelNotFound(JSON.stringify(input.model), SYSTEM_ONE_MODELS.map((m) => `"${m}"`).join(' or '));
  }
  return input;
}

function usage(inputTokens: number) {
  return { input_tokens: inputTokens, output_tokens: 0 };
}

function reply(body: unknown, out: BilledBody<unknown>): ModelReply {
  return {
    body,
    billing: { inputChars: out.inputChars, inputTokens: out.inputTokens },
    ...(out.heads ? { headers: { 'x-decision-head': out.heads.join(',') } } : {}),
  };
}
