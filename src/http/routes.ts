// The HTTP surface as plain routes: (request) -> Promise<reply>. Validation happens here, once.
import type { Engine } from '../engine/engine.js';
import type { Billed } from '../decisions/billing.js';
import type { YesNo } from '../decisions/yes-no.js';
import type { Classify } from '../decisions/classify.js';
import type { ClassifyTree } from '../decisions/classify-tree.js';
import type { Rate } from '../decisions/rate.js';
import type { Answer } from '../decisions/answer.js';
import type { Entities } from '../decisions/entities.js';
import type { Verify } from '../decisions/verify.js';
import type { Extract } from '../decisions/extract.js';
import { compile, type Validator } from '../api/validate.js';
import { YesNoRequest } from '../api/yes-no.js';
import { ClassifyRequest } from '../api/classify.js';
import { ClassifyTreeRequest, MAX_TREE_DEPTH, treeDepth } from '../api/classify-tree.js';
import { RateRequest } from '../api/rate.js';
import { AnswerRequest } from '../api/answer.js';
import { EntitiesRequest } from '../api/entities.js';
import { VerifyRequest } from '../api/verify.js';
import { ExtractRequest } from '../api/extract.js';
import { ServiceError } from '../errors.js';
import type { ApiRequest, Route } from './types.js';

export interface Service {
  name: string;
  version: string;
  engine: Engine;
  yesNo: YesNo;
  classify: Classify;
  classifyTree: ClassifyTree;
  rate: Rate;
  answer: Answer;
  entities: Entities;
  verify: Verify;
  extract: Extract;
}

const CAPABILITIES = '/v1/decision-machine-1';

export function routes(service: Service): Route[] {
  return [
    { method: 'get', path: '/', handler: async () => ({ status: 200, body: describe(service) }) },
    decision(`${CAPABILITIES}/yes-no`, compile(YesNoRequest), (body, signal) => service.yesNo.run(body, signal)),
    decision(`${CAPABILITIES}/classify`, compile(ClassifyRequest), (body, signal) => service.classify.run(body, signal)),
    decision(`${CAPABILITIES}/classify-tree`, compile(ClassifyTreeRequest), (body, signal) => {
      if (treeDepth(body.tree) > MAX_TREE_DEPTH) {
        throw new ServiceError('invalid_request', `tree: deeper than ${MAX_TREE_DEPTH} levels (each level is one model call)`);
      }
      return service.classifyTree.run(body, signal);
    }),
    decision(`${CAPABILITIES}/rate`, compile(RateRequest), (body, signal) => service.rate.run(body, signal)),
    decision(`${CAPABILITIES}/answer`, compile(AnswerRequest), (body, signal) => service.answer.run(body, signal)),
    decision(`${CAPABILITIES}/entities`, compile(EntitiesRequest), (body, signal) => service.entities.run(body, signal)),
    decision(`${CAPABILITIES}/verify`, compile(VerifyRequest), (body, signal) => service.verify.run(body, signal)),
    decision(`${CAPABILITIES}/extract`, compile(ExtractRequest), (body, signal) =>
      service.extract.run({ ...body, schema: body.schema as Record<string, unknown> }, signal),
    ),
  ];
}

function describe(service: Service) {
  return {
    name: service.name,
    version: service.version,
    model: 'decision-machine-1',
    engine: { model: service.engine.info.description, slots: service.engine.stats().slots },
    endpoints: ['yes-no', 'classify', 'classify-tree', 'rate', 'answer', 'extract', 'entities', 'verify'].map((c) => `${CAPABILITIES}/${c}`),
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
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('invalid_request', `body: invalid JSON (${(err as Error).message})`);
  }
  if (nestingDepth(body) > MAX_NESTING) throw new ServiceError('invalid_request', `body: nested deeper than ${MAX_NESTING} levels`);
  return body;
}

// Validators recurse; a hostile 100,000-deep document must be refused before it reaches them.
const MAX_NESTING = 32;

function nestingDepth(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_NESTING) return deepest;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}
