// The HTTP surface as plain routes: (request) -> Promise<reply>. Validation happens here, once,
// with the schemas of src/api/capabilities.ts (which /openapi.json is generated from).
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
import { streamOf, type Chat } from '../decisions/chat.js';
import type { Transcription } from '../audio/transcription.js';
import { audioRoutes } from './audio.js';
import { ChatCompletionRequest, refuseImages } from '../api/chat.js';
import { compile } from '../api/validate.js';
import { checkDecisions } from '../api/common.js';
import { CAPABILITIES, CAPABILITY_PREFIX, MODEL_ID, type Capability } from '../api/capabilities.js';
import { MAX_TREE_DEPTH, treeDepth } from '../api/classify-tree.js';
import { ServiceError } from '../errors.js';
import { Gate } from '../auth/gate.js';
import { openapiDocument } from './openapi.js';
import { docsRoutes } from './docs.js';
import { parseJson } from './json.js';
import { withDeadline } from './deadline.js';
import type { Route } from './types.js';
import { SystemOne } from '../decisions/systemone.js';
import { isSystemOnePath, systemOneErrors, systemOneRoutes } from './systemone.js';
import { IMAGES_UNSUPPORTED } from '../api/systemone.js';

export { parseJson };

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
  chat: Chat;
  /** POST /v1/audio/transcribe, when a whisper model is loaded. */
  transcription?: Transcription;
}

type Runner = (body: any, signal: AbortSignal) => Promise<Billed<unknown>>;

function runners(s: Service): Record<Capability, Runner> {
  return {
    'yes-no': (b, signal) => s.yesNo.run(b, signal),
    classify: (b, signal) => s.classify.run(b, signal),
    'classify-tree': (b, signal) => {
      if (treeDepth(b.tree) > MAX_TREE_DEPTH) {
        throw new ServiceError(
          'invalid_request',
          `tree: deeper than ${MAX_TREE_DEPTH} levels (each level is one model call)`,
        );
      }
      return s.classifyTree.run(b, signal);
    },
    rate: (b, signal) => s.rate.run(b, signal),
    answer: (b, signal) => s.answer.run(b, signal),
    extract: (b, signal) => s.extract.run(b, signal),
    entities: (b, signal) => s.entities.run(b, signal),
    verify: (b, signal) => s.verify.run(b, signal),
  };
}

// The one model this service lists; `created` is the date the id was first served.
const MODEL = Object.freeze({
  id: MODEL_ID,
  object: 'model',
  created: Date.UTC(2026, 10, 22) / 1000,
  owned_by: 'decision-machine-1',
});
// The same listing for System One clients (`models`: name, description, release_date), beside OpenAI's `data`.
const SYSTEM_ONE_MODELS = ['jev-latest', MODEL_ID].map((name) => ({
  name,
  description: `${MODEL_ID}: typed decisions over text (noul, choice, score)`,
  release_date: '2026-11-22',
}));

/**
 * Every route. Routes under /v1 (whoever adds them) pass through the gate: key check, rate
 * limit, usage ledger. `/`, `/openapi.json`, `/docs` and `/metrics` are public.
 */
export function routes(service: Service, gate: Gate = new Gate()): Route[] {
  const run = runners(service);
  const access = {
    keys: gate.checksKeys,
    rateLimit: gate.limitsRate,
    tokenLimit: gate.limitsTokens,
    audio: service.transcription !== undefined,
  };
  const openapi = JSON.stringify(openapiDocument(service.version, access, service.engine.requestTokens));
  const metrics = gate.options.metrics;
  const all: Route[] = [
    { method: 'get', path: '/', handler: async () => ({ status: 200, body: describe(service, gate, all) }) },
    {
      method: 'get',
      path: '/openapi.json',
      handler: async () => ({ status: 200, body: openapi, contentType: 'application/json' }),
    },
    ...docsRoutes(),
    ...(metrics
      ? [
          {
            method: 'get',
            path: '/metrics',
            handler: async () => ({
              status: 200,
              body: await metrics.text(),
              contentType: metrics.registry.contentType,
            }),
          } as Route,
        ]
      : []),
    {
      method: 'get',
      path: '/v1/models',
      handler: async () => ({ status: 200, body: { object: 'list', data: [MODEL], models: SYSTEM_ONE_MODELS } }),
    },
    {
      method: 'get',
      path: '/v1/models/:id',
      handler: async (req) => {
        const id = decodePath(req.path.slice('/v1/models/'.length));
        if (id !== MODEL_ID) throw notFound(id);
        return { status: 200, body: MODEL };
      },
    },
    ...(Object.keys(CAPABILITIES) as Capability[]).map((name) => decision(name, run[name], service.engine)),
    chatCompletions(service.chat, service.engine),
    ...systemOneRoutes(new SystemOne(service.engine)),
    ...(service.transcription ? audioRoutes(service.transcription) : []),
  ];
  return all
    .map((route) =>
      route.path.startsWith('/v1/') ? gate.guard(withDeadline(route, service.engine.requestTimeoutMs)) : route,
    )
    .map((route) => (isSystemOnePath(route.path) ? systemOneErrors(route) : route));
}

/** POST /v1/chat/completions: the model is checked first, then the body, then the mode. */
function chatCompletions(chat: Chat, engine: Engine): Route {
  const validate = compile(ChatCompletionRequest);
  return {
    method: 'post',
    path: '/v1/chat/completions',
    admissible: () => engine.assertAdmissible(),
    handler: async (req) => {
      const body = parseJson(req);
      const model = (body as { model?: unknown } | null)?.model;
      if (typeof model === 'string' && model !== MODEL_ID) {
        throw notFound(model);
      }
      const request = validate(body);
      refuseImages(request);
      const completion = await engine.admitted(() => chat.complete(request, req.signal));
      const headers = { 'x-input-tokens': String(completion.usage.prompt_tokens) };
      if (request.stream)
        return {
          status: 200,
          body: streamOf(completion),
          contentType: 'text/event-stream',
          headers: { ...headers, 'cache-control': 'no-cache' },
        };
      return { status: 200, body: completion, headers };
    },
  };
}

function describe(service: Service, gate: Gate, all: Route[]) {
  return {
    name: service.name,
    version: service.version,
    description:
      'Typed decisions over text and speech: yes/no, labels, label trees, ratings, answer spans, JSON extraction, entities, verification; transcription with word times and speakers; an OpenAI-compatible chat facade for extraction and function calling.',
    model: MODEL_ID,
    links: { openapi: '/openapi.json', docs: '/docs', metrics: gate.options.metrics ? '/metrics' : null },
    authentication: gate.checksKeys ? 'Authorization: Bearer <key> on every /v1 route' : 'off: no key needed',
    api_version: '1.0.0',
    engine: {
      model: service.engine.info.description,
      slots: service.engine.stats().slots,
      whisper: service.engine.versions.whisper,
      cpu: service.engine.versions.system,
    },
    openapi: '/openapi.json',
    // Every route this process serves (audio only when a whisper model is loaded), from the route table itself.
    endpoints: all.map((r) => `${r.method.toUpperCase()} ${r.path}`),
  };
}

/** model_not_found, quoting at most 64 characters of the id sent. */
function notFound(id: string): ServiceError {
  const shown = id.length > 64 ? `${JSON.stringify(id.slice(0, 64))}… (${id.length} characters)` : JSON.stringify(id);
  return new ServiceError('model_not_found', `model ${shown} not found; use "${MODEL_ID}"`);
}

/** A percent-decoded path segment; malformed escapes (`%ff`) are kept as sent rather than thrown. */
function decodePath(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * A capability endpoint: JSON in, typed result out, input size in x-input-* headers and the
 * decision's time on the server (slot wait included) in x-inference-ms. A valid request is
 * admitted once, before any model work, for all it runs (see Engine.admitted).
 */
function decision(name: Capability, run: Runner, engine: Engine): Route {
  const validate = compile(CAPABILITIES[name].request);
  return {
    method: 'post',
    path: `${CAPABILITY_PREFIX}/${name}`,
    admissible: () => engine.assertAdmissible(),
    handler: async (req) => {
      const body = parseJson(req);
      // The hosted service's SDK sends `image` (and `detail`) for image input.
      if (body !== null && typeof body === 'object' && 'image' in body)
        throw new ServiceError('invalid_request', `image: ${IMAGES_UNSUPPORTED}`);
      const input = validate(body);
      checkDecisions(input as Parameters<typeof checkDecisions>[0]);
      const started = performance.now();
      const out = await engine.admitted(() => run(input, req.signal));
      return {
        status: 200,
        body: out.body,
        headers: {
          'x-input-chars': String(out.inputChars),
          'x-input-tokens': String(out.inputTokens),
          'x-inference-ms': String(Math.round(performance.now() - started)),
        },
      };
    },
  };
}
