// Wraps a /v1 route with the key gate (src/auth/gate.ts): the gate is handed the caller's key, the
// route's cost and the reply's billing, so it knows no route, body or header of this layer.
import { teacher, type Gate } from '../auth/gate.js';
import type { Feedback } from '../feedback/feedback.js';
import { decisionHeaders } from '../feedback/kept.js';
import type { Route } from './types.js';

/** `feedback`, when given, says how the reply's decisions are kept (with their texts or not). */
export function guarded(route: Route, gate: Gate, feedback?: Feedback): Route {
  return {
    ...route,
    handler: async (req) => {
      const principal = await gate.identify(req.headers.authorization);
      const cost = gate.limitsRate ? (route.cost?.(req) ?? 1) : 1; // the body is counted only when a limit applies
      const pass = await gate.enter(principal, cost, route.method === 'post');
      req.log.key = pass.principal.keyId;
      req.log.org = pass.principal.organization;
      req.organization = teacher(gate, pass.principal);
      const reply = await route.handler(req).finally(pass.release);
      const delivered = reply.status >= 200 && reply.status < 300; // 202: a correction stored
      // Decisions kept with the usage row; their ids are sent only once it is written (or journalled).
      const kept = delivered && gate.keepsDecisions ? reply.decisions : undefined;
      const billed = await gate.leave(pass, {
        requestId: req.id,
        route: route.path,
        inputTokens: delivered ? reply.billing?.inputTokens : undefined,
        decisions: kept && feedback ? feedback.keep(kept.drafts) : kept?.drafts,
      });
      const headers = kept ? { ...billed, ...decisionHeaders(kept) } : billed;
      return Object.keys(headers).length === 0 ? reply : { ...reply, headers: { ...reply.headers, ...headers } };
    },
  };
}
