// The HTTP surface as plain routes: (request) -> Promise<reply>. Every route that runs the model
// is made by modelRoute() (model-route.ts); the capability routes come from the capability table
// (src/decisions/capabilities.ts), validated with its validators and documented from its schemas.
import type { Engine } from '../engine/engine.js';
import { streamOf, type Chat } from '../decisions/chat.js';
import type { BoundCapability, Decisions } from '../decisions/capabilities.js';
import type { Transcription } from '../audio/transcription.js';
import type { Heads } from '../heads/heads.js';
import { audioRoutes } from './audio.js';
import { ChatCompletionRequest, refuseImages } from '../api/chat.js';
import { compile } from '../api/validate.js';
import { CAPABILITY_PREFIX } from '../api/capability.js';
import { MODEL_ID, SYSTEM_ONE_MODELS } from '../api/models.js';
import { ERRORS, ServiceError } from '../errors.js';
import { Gate } from '../auth/gate.js';
import { openapiDocument } from './openapi.js';
import { docsRoutes } from './docs.js';
import { parseJson } from './json.js';
import { guarded } from './guard.js';
import { itemsOf, modelRoute } from './model-route.js';
import type { Route } from './types.js';
import type { SystemOne } from '../decisions/systemone.js';
import { systemOneRoutes } from './systemone.js';
import { IMAGES_UNSUPPORTED } from '../api/systemone.js';
import { draftsOf } from '../feedback/kept.js';
import type { Feedback } from '../feedback/feedback.js';
import { feedbackRoutes } from './feedback.js';

/** What the routes serve: every capability's decision (by method name), chat, audio when loaded. */
export type Service = Decisions & {
  name: string;
  version: string;
  engine: Engine;
  /** The capability table opened on `engine`, in order. */
  capabilities: BoundCapability[];
  chat: Chat;
  /** The System One routes' decisions (noul, choice, score questions). */
  systemOne: SystemOne;
  /** The fitted heads the decisions apply, when a store holds them. */
  heads?: Heads;
  /** POST /v1/audio/transcribe, when a whisper model is loaded. */
  transcription?: Transcription;
};

// The one model this service lists; `created` is the date the id was first served.
const MODEL = Object.freeze({
  id: MODEL_ID,
  object: 'model',
  created: Date.UTC(2026, 10, 22) / 1000,
  owned_by: 'decision-machine-1',
});
// The same listing for System One clients (`models`: name, description, release_date), beside OpenAI's `data`.
const SYSTEM_ONE_LISTING = SYSTEM_ONE_MODELS.map((name) => ({
  name,
  description: `${MODEL_ID}: typed decisions over text (noul, choice, score)`,
  release_date: '2026-11-22',
}));

/**
 * Every route. Routes under /v1 (whoever adds them) pass through the gate: key check, rate
 * limit, usage ledger; with `feedback`, the correction routes (src/http/feedback.ts). `/`,
 * `/openapi.json`, `/docs` and `/metrics` are public.
 */
export function routes(service: Service, gate: Gate = new Gate(), feedback?: Feedback): Route[] {
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
      handler: async () => ({ status: 200, body: { object: 'list', data: [MODEL], models: SYSTEM_ONE_LISTING } }),
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
    ...service.capabilities.map((c) => decision(c, service.engine)),
    chatCompletions(service.chat, service.engine),
    ...systemOneRoutes(service.systemOne, service.engine),
    ...(service.transcription ? audioRoutes(service.transcription) : []),
    ...(feedback ? feedbackRoutes(feedback) : []),
  ];
  return all.map((route) => (route.path.startsWith('/v1/') ? guarded(route, gate, feedback) : route));
}

/** POST /v1/chat/completions: the model is checked first, then the body, then the mode. */
function chatCompletions(chat: Chat, engine: Engine): Route {
  const validate = compile(ChatCompletionRequest);
  return modelRoute(engine, {
    path: '/v1/chat/completions',
    read: (req) => {
      const body = parseJson(req);
      const model = (body as { model?: unknown } | null)?.model;
      if (typeof model === 'string' && model !== MODEL_ID) throw notFound(model);
      const request = validate(body);
      refuseImages(request);
      return request;
    },
    run: async (request, session) => {
      const completion = await chat.complete(request, session);
      const billing = { inputTokens: completion.usage.prompt_tokens };
      if (request.stream)
        return {
          body: streamOf(completion),
          contentType: 'text/event-stream',
          headers: { 'cache-control': 'no-cache' },
          billing,
        };
      return { body: completion, billing };
    },
  });
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
    // up; degraded: the database is away or behind, usage rows wait in the local journal; connecting.
    store: gate.options.ledger?.state ?? null,
    api_version: '1.0.0',
    engine: {
      model: service.engine.info.description,
      slots: service.engine.stats().slots,
      whisper: service.engine.versions.whisper,
      cpu: service.engine.versions.system,
    },
    openapi: '/openapi.json',
    // The deployment's fitted heads (src/heads): decisions learnt from its labels (an organization's: GET /v1/heads).
    heads: (service.heads?.list('') ?? []).map(({ id, capability, examples }) => ({ id, capability, examples })),
    // Every route this process serves (audio only when a whisper model is loaded), from the route table itself.
    endpoints: all.map((r) => `${r.method.toUpperCase()} ${r.path}`),
  };
}

/** model_not_found, quoting at most 64 characters of the id sent. */
function notFound(id: string): ServiceError {
  const shown = id.length > 64 ? `${JSON.stringify(id.slice(0, 64))}… (${id.length} characters)` : JSON.stringify(id);
  return ERRORS.modelNotFound(shown, `"${MODEL_ID}"`);
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
 * A capability endpoint: JSON in, typed result out, validated by the capability's own validator
 * (the library's too). Each item of texts, statements or questions counts one request.
 */
function decision<I, O>(c: BoundCapability<I, O>, engine: Engine): Route {
  return modelRoute(engine, {
    path: `${CAPABILITY_PREFIX}/${c.capability.name}`,
    cost: itemsOf('texts', 'statements', 'questions'),
    read: (req) => {
      const body = parseJson(req);
      // The hosted service's SDK sends `image` (and `detail`) for image input.
      if (body !== null && typeof body === 'object' && 'image' in body)
        throw ERRORS.invalidRequest(`image: ${IMAGES_UNSUPPORTED}`);
      return c.validate(body);
    },
    run: async (input, session) => {
      const out = await c.decision.run(input, session);
      return {
        body: out.body,
        billing: { inputChars: out.inputChars, inputTokens: out.inputTokens },
        ...(out.heads ? { headers: { 'x-decision-head': out.heads.join(',') } } : {}),
        decisions: draftsOf(c.capability.name, input as Record<string, unknown>, out.body, out.heads),
      };
    },
  });
}
