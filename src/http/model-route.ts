// The one way a route runs the model (the capabilities, chat, System One, audio): the service's
// capacity is checked before the body is read (529 costs no upload), the request is read and
// validated outside admission, then admitted once (Engine.admit returns its Session), the work run
// here with that Session (all it starts runs in it) and the Session closed once the work is done
// or has thrown; the reply carries its billing as a typed field (the transport writes x-input-*,
// the gate meters it).
// Whatever applies to every model call (readiness, a deadline) belongs here.
import type { Engine, Session } from '../engine/engine.js';
import type { ServiceError } from '../errors.js';
import type { ApiReply, ApiRequest, Billing, Route } from './types.js';
import type { AnswerDrafts } from '../feedback/kept.js';
import { countItems } from './json.js';
import { withDeadline } from './deadline.js';

/** What a model route's work returns: the body and what it is billed for. */
export interface ModelReply {
  body: unknown;
  billing: Billing;
  contentType?: string;
  headers?: Record<string, string>;
  /** The model's own time, ms, when the work measures it (audio); else the admitted time is sent. */
  inferenceMs?: number;
  /** The decisions made that may be corrected (src/feedback/kept.ts). */
  decisions?: AnswerDrafts;
}

export interface ModelRouteSpec<I> {
  path: string;
  /** Reads and validates the request (body, query, headers); throws before any admission. */
  read(req: ApiRequest): I;
  /**
   * The model work, all of it in `session` (the request's one admission); the session's signal
   * aborts when the client goes away or the deadline passes.
   */
  run(input: I, session: Session): Promise<ModelReply>;
  /** Requests this call counts against a key's per-minute limit (1 when absent). */
  cost?: (req: ApiRequest) => number;
  maxBodyBytes?: number;
  errors?: (err: ServiceError) => ApiReply;
}

/** The route of `spec`, under the request deadline (src/http/deadline.ts). */
export function modelRoute<I>(engine: Engine, spec: ModelRouteSpec<I>): Route {
  return withDeadline(untimed(engine, spec), engine.requestTimeoutMs);
}

function untimed<I>(engine: Engine, spec: ModelRouteSpec<I>): Route {
  return {
    method: 'post',
    path: spec.path,
    maxBodyBytes: spec.maxBodyBytes,
    cost: spec.cost,
    errors: spec.errors,
    admissible: () => engine.assertAdmissible(),
    handler: async (req) => {
      const input = spec.read(req);
      const started = performance.now();
      // The organization's own heads decide its requests (src/heads/heads.ts).
      const session = engine.admit({ signal: req.signal, organization: req.organization });
      let out: ModelReply;
      try {
        out = await spec.run(input, session);
      } finally {
        session.close();
      }
      return {
        status: 200,
        body: out.body,
        contentType: out.contentType,
        headers: out.headers,
        billing: out.billing,
        decisions: out.decisions,
        inferenceMs: out.inferenceMs ?? Math.round(performance.now() - started),
      };
    },
  };
}

/** A route's cost from its JSON body: one per item of the named lists (see countItems). */
export function itemsOf(...lists: string[]): (req: ApiRequest) => number {
  return (req) => countItems(req, lists);
}
