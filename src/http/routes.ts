// The HTTP surface as plain routes: (request) -> Promise<reply>. Validation happens here, once.
import type { Engine } from '../engine/engine.js';
import type { Billed } from '../decisions/billing.js';
import type { YesNo } from '../decisions/yes-no.js';
import { compile, type Validator } from '../api/validate.js';
import { YesNoRequest } from '../api/yes-no.js';
import { ServiceError } from '../errors.js';
import type { ApiRequest, Route } from './types.js';

export interface Service {
  name: string;
  version: string;
  engine: Engine;
  yesNo: YesNo;
}

export function routes(service: Service): Route[] {
  return [
    { method: 'get', path: '/', handler: async () => ({ status: 200, body: describe(service) }) },
    decision('/v1/decision-machine-1/yes-no', compile(YesNoRequest), (body, signal) => service.yesNo.run(body, signal)),
  ];
}

function describe(service: Service) {
  return {
    name: service.name,
    version: service.version,
    model: 'decision-machine-1',
    engine: { model: service.engine.info.description, slots: service.engine.stats().slots },
    endpoints: ['/v1/decision-machine-1/yes-no'],
  };
}

/** A capability endpoint: JSON in, typed result out, input size in x-input-* headers. */
function decision<T>(path: string, validate: Validator<T>, run: (body: T, signal: AbortSignal) => Promise<Billed<unknown>>): Route {
  return {
    method: 'post',
    path,
    handler: async (req) => {
      const out = await run(validate(parseJson(req)), req.signal);
      return {
        status: 200,
        body: out.body,
        headers: { 'x-input-chars': String(out.inputChars), 'x-input-tokens': String(out.inputTokens) },
      };
    },
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseJson(req: ApiRequest): unknown {
  if (req.body.length === 0) throw new ServiceError('invalid_request', 'body: Invalid input: expected a JSON object, received an empty body');
  let text: string;
  try {
    text = utf8.decode(req.body);
  } catch {
    throw new ServiceError('invalid_request', 'body: not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError('invalid_request', `body: invalid JSON (${(err as Error).message})`);
  }
}
