// Every error the service returns has a stable code; this one table maps codes to HTTP status.
const ERROR_STATUS = Object.freeze({
  invalid_request: 400,
  invalid_schema: 400,
  unsupported_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  model_not_found: 404,
  decision_not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  internal_error: 500,
  runner_error: 502,
  not_ready: 503,
  store_unavailable: 503,
  timeout: 504,
  overloaded: 529,
});

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Codes worth retrying: every error reply says so in `x-should-retry`, which the official OpenAI
 * SDKs obey (their default of two retries with jittered backoff is the spec's "at most three
 * attempts"). Busy slots and a twice-failed inference are transient; a rate limit is retried
 * after its Retry-After; a process still loading or draining is retried (on another replica
 * behind a balancer), and so is a call the store could not serve (after its Retry-After). A
 * request past its deadline would pass it again; everything else fails the same way again.
 */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set([
  'overloaded',
  'runner_error',
  'rate_limit_exceeded',
  'not_ready',
  'store_unavailable',
]);

/** Why a request was refused without an answer: the reasons GET /metrics counts (dm_refusals_total). */
export const REFUSALS = [
  'overloaded',
  'rate_limit',
  'inflight_cap',
  'deadline',
  'not_ready',
  'store_unavailable',
] as const;
export type Refusal = (typeof REFUSALS)[number];
const REFUSAL_OF: Partial<Record<ErrorCode, Refusal>> = {
  overloaded: 'overloaded',
  rate_limit_exceeded: 'rate_limit',
  timeout: 'deadline',
  not_ready: 'not_ready',
  store_unavailable: 'store_unavailable',
};

/** An error meant for the client: serialised as `{ error: { code, message } }` with its status. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  /** Headers sent with the error reply (x-should-retry, and Retry-After where one is known). */
  readonly headers: Record<string, string>;
  /** The refusal this error counts as: its code's, unless given (the in-flight cap's 429). */
  readonly refusal: Refusal | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
    refusal: Refusal | undefined = REFUSAL_OF[code],
  ) {
    // A client error needs no stack trace, and capturing one costs more than the rest of the reply.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ServiceError';
    this.code = code;
    this.refusal = refusal;
    this.headers = { 'x-should-retry': String(RETRYABLE.has(code)), ...headers };
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
  toJSON(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

const STORE_RETRY_SECONDS = 5;

/** 503 store_unavailable, retried after a few seconds: the database is away and the call needs it. */
export function storeUnavailable(what: string): ServiceError {
  return new ServiceError('store_unavailable', `${what}; retry in a few seconds`, {
    'retry-after': String(STORE_RETRY_SECONDS),
  });
}

/** The request was cancelled by its caller (client disconnected, signal aborted). */
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}
