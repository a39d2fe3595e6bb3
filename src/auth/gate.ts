// What every /v1 route passes through, in one place (src/http/routes.ts wraps each /v1 route):
// key check -> rate limit -> the route -> usage ledger. Public routes are not wrapped.
import { ServiceError } from '../errors.js';
import { parseJson } from '../http/json.js';
import type { ApiReply, ApiRequest, Route } from '../http/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { PUBLIC, type KeyChecker, type Principal } from './checker.js';
import type { Limiter, TokenMeter } from './limiter.js';
import type { InflightCap } from './inflight.js';

export interface GateOptions {
  /** Checks bearer keys; absent means key checking is off and every caller is PUBLIC. */
  keys?: KeyChecker;
  /** Requests-per-minute per key; only applies with key checking on (limits are per key). */
  limiter?: Limiter;
  /** Input tokens per minute per key; like the limiter, only with key checking on. */
  tokens?: TokenMeter;
  /** Requests one key may have in flight (POST routes); like the limiter, only with key checking on. */
  inflight?: InflightCap;
  /** Where successful calls' input tokens are recorded. */
  ledger?: Pick<Store, 'recordUsage'>;
  metrics?: Metrics;
  log?: Logger;
}

/**
 * Lists whose every item counts as one request against the limit (validation caps each at 32);
 * System One's `questions` is an object: each question counts, as each statement does.
 */
const COUNTED_LISTS = ['texts', 'statements', 'questions', 'states'] as const;
const MAX_ITEMS = 32;

export class Gate {
  constructor(readonly options: GateOptions = {}) {}

  get checksKeys(): boolean {
    return this.options.keys !== undefined;
  }

  get limitsRate(): boolean {
    return this.checksKeys && this.options.limiter !== undefined;
  }

  get limitsTokens(): boolean {
    return this.checksKeys && this.options.tokens !== undefined;
  }

  guard(route: Route): Route {
    return { ...route, handler: (req) => this.pass(route, req) };
  }

  private async pass(route: Route, req: ApiRequest): Promise<ApiReply> {
    const { keys, limiter, tokens: meter, ledger, metrics, log } = this.options;
    const principal: Principal = keys ? await keys.check(req.headers.authorization) : PUBLIC;
    req.log.key = principal.keyId;
    req.log.org = principal.organization;

    // A spent token window refuses before the request limit counts the call.
    if (keys && meter) {
      const window = meter.state(principal.keyId);
      if (window.remaining === 0) {
        const message = `token limit of ${window.limit} input tokens per minute reached; retry after ${window.resetSeconds} s`;
        throw new ServiceError('rate_limit_exceeded', message, {
          ...tokenHeaders(window),
          'retry-after': String(window.resetSeconds),
        });
      }
    }

    let limitHeaders: Record<string, string> = {};
    if (keys && limiter) {
      const cost = requestCost(req);
      const verdict = await limiter.take(principal.keyId, cost);
      limitHeaders = {
        'x-ratelimit-limit-requests': String(verdict.limit),
        'x-ratelimit-remaining-requests': String(verdict.remaining),
        'x-ratelimit-reset-requests': `${verdict.resetSeconds}s`,
      };
      if (!verdict.allowed) {
        const message =
          cost > verdict.limit
            ? `this request counts ${cost} requests (one per item of texts, statements, questions or states), more than the limit of ${verdict.limit} per minute: split it`
            : `rate limit of ${verdict.limit} requests per minute reached (this request counts ${cost}); retry after ${verdict.resetSeconds} s`;
        const retry: Record<string, string> =
          cost > verdict.limit ? { 'x-should-retry': 'false' } : { 'retry-after': String(verdict.resetSeconds) };
        throw new ServiceError('rate_limit_exceeded', message, { ...limitHeaders, ...retry });
      }
    }

    const cap = keys && route.method === 'post' ? this.options.inflight : undefined;
    const release = await cap?.take(principal.keyId);
    const reply = await route.handler(req).finally(() => release?.());
    const tokens = Number(reply.headers?.['x-input-tokens']);
    if (keys && meter) {
      if (reply.status === 200 && Number.isInteger(tokens)) meter.spend(principal.keyId, tokens);
      limitHeaders = { ...limitHeaders, ...tokenHeaders(meter.state(principal.keyId)) };
    }
    if (reply.status === 200 && Number.isInteger(tokens)) {
      metrics?.billed(route.path, tokens);
      const entry = {
        requestId: req.id,
        keyId: principal.keyId,
        organization: principal.organization,
        mode: principal.mode,
        route: route.path,
        inputTokens: tokens,
        at: new Date().toISOString(),
      };
      // The response waits for its ledger row, so the ledger never misses a delivered answer.
      // A failing database does not take the answer away; it is logged loudly instead.
      await ledger
        ?.recordUsage(entry)
        .catch((err: unknown) =>
          log?.error('usage not recorded', { id: req.id, key: principal.keyId, tokens, error: String(err) }),
        );
    }
    return Object.keys(limitHeaders).length === 0
      ? reply
      : { ...reply, headers: { ...reply.headers, ...limitHeaders } };
  }
}

function tokenHeaders(window: { limit: number; remaining: number; resetSeconds: number }): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(window.limit),
    'x-ratelimit-remaining-tokens': String(window.remaining),
    'x-ratelimit-reset-tokens': `${window.resetSeconds}s`,
  };
}

/** Requests this call counts against the limit: one per item of texts/statements/questions/states, at least one. */
export function requestCost(req: ApiRequest): number {
  // Only JSON objects carry lists (audio and other raw bodies are one request each).
  if (req.body.toString('latin1', 0, 64).trimStart()[0] !== '{') return 1;
  let body: unknown;
  try {
    body = parseJson(req);
  } catch {
    return 1; // refused by the route's validation, still one request
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 1;
  let items = 0;
  for (const name of COUNTED_LISTS) {
    const list = (body as Record<string, unknown>)[name];
    if (Array.isArray(list)) items += Math.min(list.length, MAX_ITEMS);
    else if (name === 'questions' && list !== null && typeof list === 'object')
      items += Math.min(Object.keys(list).length, MAX_ITEMS);
  }
  return Math.max(1, items);
}
