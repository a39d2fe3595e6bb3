// What every /v1 route passes through, in one place (src/http/guard.ts wraps each /v1 route with
// it): key check -> token window -> rate limit (the route's cost) -> the route -> usage metered
// and recorded from the reply's billing. The gate knows no route or body: it is handed a key, a
// cost and what was billed. Public routes are not wrapped.
import { randomUUID } from 'node:crypto';
import { ERRORS } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Ledger } from '../store/ledger.js';
import type { KeptDecision } from '../store/store.js';
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
  /** Where successful calls' input tokens are recorded (the store, or its journal while it is away). */
  ledger?: Pick<Ledger, 'record' | 'accepting' | 'state'>;
  metrics?: Metrics;
  log?: Logger;
  /** Requests of one key in flight at once (DM_KEY_MAX_INFLIGHT); only with key checking on. */
  inflight?: InflightCap;
  /** Keeps a reply's correctable decisions with its usage row, and names them in x-decision-id(s). */
  keepDecisions?: boolean;
}

/** A caller let through: who it is, the rate-limit headers its reply carries, its in-flight place. */
export interface Pass {
  principal: Principal;
  headers: Record<string, string>;
  /** Gives back the key's in-flight place (idempotent); call it when the route has answered or failed. */
  release: () => void;
}

/** What a delivered reply was billed for, for the token window, metrics and the ledger. */
export interface Delivery {
  requestId: string;
  /** The route's path, as metrics and the ledger name it. */
  route: string;
  /** Input tokens billed; absent for a reply that bills nothing (an error, a public route). */
  inputTokens?: number;
  /** The reply's correctable decisions (src/feedback/kept.ts), kept with its row when keepsDecisions. */
  decisions?: Omit<KeptDecision, 'organization' | 'at'>[];
}

export class Gate {
  constructor(readonly options: GateOptions = {}) {}

  get checksKeys(): boolean {
    return this.options.keys !== undefined;
  }

  get limitsRate(): boolean {
    return this.checksKeys && this.options.limiter !== undefined;
  }

  /** Whether replies' correctable decisions are kept (DM_FEEDBACK_RETENTION above 0). */
  get keepsDecisions(): boolean {
    return this.options.keepDecisions === true;
  }

  get limitsTokens(): boolean {
    return this.checksKeys && this.options.tokens !== undefined;
  }

  /**
   * Who the caller is: checks the key, that usage can be recorded and the key's token window;
   * throws the refusal. Then enter() with the call's cost.
   */
  async identify(authorization: string | undefined): Promise<Principal> {
    const { keys, tokens: meter, ledger } = this.options;
    const principal: Principal = keys ? await keys.check(authorization) : PUBLIC;
    if (ledger && !ledger.accepting)
      throw ERRORS.storeUnavailable('usage cannot be recorded (database away, journal full or its disk refusing)');

    // A spent token window refuses before the request limit counts the call.
    if (keys && meter) {
      const window = meter.state(principal.keyId);
      if (window.remaining === 0) {
        const message = `token limit of ${window.limit} input tokens per minute reached; retry after ${window.resetSeconds} s`;
        throw ERRORS.rateLimitExceeded(message, {
          ...tokenHeaders(window),
          'retry-after': String(window.resetSeconds),
        });
      }
    }
    return principal;
  }

  /**
   * Lets an identified caller through: checks the request limit (`cost` is how many requests this
   * call counts; the caller need count them only when limitsRate) and, for a call that `occupies`
   * the model, the key's in-flight cap; throws the refusal.
   */
  async enter(principal: Principal, cost: number, occupies = false): Promise<Pass> {
    const { keys, limiter } = this.options;
    let headers: Record<string, string> = {};
    if (keys && limiter) {
      const verdict = await limiter.take(principal.keyId, cost);
      headers = {
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
        throw ERRORS.rateLimitExceeded(message, { ...headers, ...retry });
      }
    }
    const cap = keys && occupies ? this.options.inflight : undefined;
    const release = (await cap?.take(principal.keyId)) ?? (() => {});
    return { principal, headers, release };
  }

  /** Meters and records what a reply was billed for; returns the headers the reply carries. */
  async leave(pass: Pass, delivery: Delivery): Promise<Record<string, string>> {
    const { keys, tokens: meter, ledger, metrics, log } = this.options;
    const { principal } = pass;
    const tokens = delivery.inputTokens;
    let headers = pass.headers;
    if (keys && meter) {
      if (tokens !== undefined) meter.spend(principal.keyId, tokens);
      headers = { ...headers, ...tokenHeaders(meter.state(principal.keyId)) };
    }
    if (tokens !== undefined) {
      const at = new Date().toISOString();
      const kept = this.keepsDecisions ? delivery.decisions : undefined;
      const entry = {
        entryId: randomUUID(),
        requestId: delivery.requestId,
        keyId: principal.keyId,
        organization: principal.organization,
        mode: principal.mode,
        route: delivery.route,
        inputTokens: tokens,
        at,
        ...(kept ? { decisions: kept.map((d) => ({ ...d, organization: teacher(this, principal), at })) } : {}),
      };
      // The response waits for its row to be in the store or durably in the journal, so the
      // ledger never misses a delivered answer. When neither can take it (a full disk while the
      // database is away) the answer is withheld: 503, retried later, and nothing unbilled leaves.
      await ledger?.record(entry).catch((err: unknown) => {
        metrics?.unrecorded();
        log?.error('usage not recorded: answer withheld', {
          id: delivery.requestId,
          key: principal.keyId,
          tokens,
          error: String(err),
        });
        throw ERRORS.storeUnavailable('usage cannot be recorded (database away, journal full or its disk refusing)');
      });
      metrics?.billed(delivery.route, tokens);
    }
    return headers;
  }
}

/**
 * Whose corrections a caller's are, and whose heads decide its requests: its organization with
 * keys on; with keys off every caller is the deployment itself ('').
 */
export function teacher(gate: Gate, principal: Principal): string {
  return gate.checksKeys ? principal.organization : '';
}

function tokenHeaders(window: { limit: number; remaining: number; resetSeconds: number }): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(window.limit),
    'x-ratelimit-remaining-tokens': String(window.remaining),
    'x-ratelimit-reset-tokens': `${window.resetSeconds}s`,
  };
}
