// Wraps a /v1 route with the key gate (src/auth/gate.ts): the gate is handed the caller's key, the
// route's cost and the reply's billing, so it knows no route, body or header of this layer.
import type { Gate } from '../auth/gate.js';
import type { Route } from './types.js';

export function guarded(route: Route, gate: Gate): Route {
  return {
    ...route,
    handler: async (req) => {
      const pass = await gate.enter(req.headers.authorization, () => route.cost?.(req) ?? 1, route.method === 'post');
      req.log.key = pass.principal.keyId;
      req.log.org = pass.principal.organization;
      const reply = await route.handler(req).finally(pass.release);
      const headers = await gate.leave(pass, {
        requestId: req.id,
        route: route.path,
        inputTokens: reply.status === 200 ? reply.billing?.inputTokens : undefined,
      });
      return Object.keys(headers).length === 0 ? reply : { ...reply, headers: { ...reply.headers, ...headers } };
    },
  };
}
