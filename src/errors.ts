// The error catalogue. Every error the service returns has a stable code with one HTTP status and
// whether retrying it can help (CODES), and is made by one of the named factories of ERRORS
// (fastify's catalogue: createError(code, message template)), so no call site picks a status or
// a retry hint. /openapi.json documents its error responses from CODES (src/http/openapi.ts);
// test/http/error-catalogue.test.ts holds the README's error table to it, row for row.

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

/** What one code means to a client. */
export interface CodeEntry {
  /** The HTTP status every error of the code is sent with. */
  status: number;
  /** `x-should-retry`: whether retrying may succeed. */
  retry: boolean;
  /** Whether its errors carry Retry-After (the rate limits', when the window resets; the store's). */
  retryAfter?: boolean;
  /** The refusal an error of the code counts as on GET /metrics. */
  refusal?: Refusal;
}

/**
 * Every code, by status. Worth retrying (`x-should-retry: true`, which the official OpenAI SDKs
 * obey: their default of two retries with jittered backoff is the spec's "at most three
 * attempts"): busy slots and a twice-failed inference are transient; a rate limit is retried
 * after its Retry-After; a process still loading or draining is retried (on another replica
 * behind a balancer), and so is a call the store could not serve (after its Retry-After). A
 * request past its deadline would pass it again; everything else fails the same way again.
 */
const CODE_TABLE = {
  invalid_request: { status: 400, retry: false },
  invalid_schema: { status: 400, retry: false },
  unsupported_request: { status: 400, retry: false },
  missing_api_key: { status: 401, retry: false },
  invalid_api_key: { status: 401, retry: false },
  model_not_found: { status: 404, retry: false },
  decision_not_found: { status: 404, retry: false },
  payload_too_large: { status: 413, retry: false },
  unsupported_media_type: { status: 415, retry: false },
  rate_limit_exceeded: { status: 429, retry: true, retryAfter: true, refusal: 'rate_limit' },
  internal_error: { status: 500, retry: false },
  runner_error: { status: 502, retry: true },
  not_ready: { status: 503, retry: true, refusal: 'not_ready' },
  store_unavailable: { status: 503, retry: true, retryAfter: true, refusal: 'store_unavailable' },
  timeout: { status: 504, retry: false, refusal: 'deadline' },
  overloaded: { status: 529, retry: true, refusal: 'overloaded' },
} satisfies Record<string, CodeEntry>;

export type ErrorCode = keyof typeof CODE_TABLE;
export const CODES: Readonly<Record<ErrorCode, Readonly<CodeEntry>>> = Object.freeze(CODE_TABLE);

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
    refusal: Refusal | undefined = CODES[code].refusal,
  ) {
    // A client error needs no stack trace, and capturing one costs more than the rest of the reply.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ServiceError';
    this.code = code;
    this.refusal = refusal;
    this.headers = { 'x-should-retry': String(CODES[code].retry), ...headers };
  }
  get status(): number {
    return CODES[this.code].status;
  }
  toJSON(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/**
 * The maker of one named error (fastify's createError(code, message, statusCode), the status
 * being the code's): `message` is its template, `headers` what it always carries.
 */
export function createError<A extends unknown[]>(
  code: ErrorCode,
  message: (...args: A) => string,
  headers?: Record<string, string>,
  refusal?: Refusal,
): (...args: A) => ServiceError {
  return (...args) => new ServiceError(code, message(...args), headers, refusal);
}

/** A code whose messages are written where the fault is found (a field named, a limit quoted). */
const written = (message: string) => message;

const STORE_RETRY_SECONDS = 5;

/** Every error the service makes, by name, grouped by code. */
export const ERRORS = {
  /** A request refused as sent: the field at fault named, as `path: message` where there is one. */
  invalidRequest: createError('invalid_request', written),
  invalidSchema: createError('invalid_schema', written),
  unsupportedRequest: createError('unsupported_request', written),

  missingApiKey: createError(
    'missing_api_key',
    () => 'missing API key: send your key in the Authorization header as "Bearer <key>"',
  ),
  invalidApiKey: createError('invalid_api_key', () => 'the API key provided is incorrect'),

  /** `model` as sent (quoted, shortened), `use` the names served. */
  modelNotFound: createError('model_not_found', (model: string, use: string) => `model ${model} not found; use ${use}`),
  decisionNotFound: createError(
    'decision_not_found',
    (decision: string, retention: string) =>
      `decision ${decision} not found: unknown (a System One decision needs its question), made for another organization, or older than the retention of ${retention}`,
  ),

  /** A body, or a form's file, over its cap of `max` bytes. */
  tooLarge: createError(
    'payload_too_large',
    (what: string, max: number) => `${what}: larger than the limit of ${max} bytes`,
  ),
  /** Audio longer than DM_AUDIO_MAX_SECONDS, as the decoder says it. */
  audioTooLong: createError('payload_too_large', written),

  unsupportedMediaType: createError('unsupported_media_type', written),

  /** The key's request or token window is spent (the gate's message and x-ratelimit-* headers). */
  rateLimitExceeded: (message: string, headers: Record<string, string>) =>
    new ServiceError('rate_limit_exceeded', message, headers),
  inflightCap: createError(
    'rate_limit_exceeded',
    (max: number) =>
      `this key already has ${max} request${max === 1 ? '' : 's'} in flight, its limit; send the next when one is answered`,
    { 'retry-after': '1' },
    'inflight_cap',
  ),

  internalError: createError('internal_error', () => 'internal error'),

  inferenceFailed: createError('runner_error', (last: string) => `inference failed twice: ${last}`),
  tokenizerMismatch: createError(
    'runner_error',
    () => 'the model tokenizer does not reproduce the text byte for byte; spans cannot be located',
  ),
  /** The public front could not reach uWebSockets.js. */
  upstreamFailed: createError('runner_error', () => 'the request could not be passed to the service'),

  loading: createError('not_ready', () => 'the model is still loading; retry in a few seconds'),
  shuttingDown: createError('not_ready', () => 'the service is shutting down; retry on another replica'),
  /** Retried after a few seconds: the database is away and the call needs it. */
  storeUnavailable: createError('store_unavailable', (what: string) => `${what}; retry in a few seconds`, {
    'retry-after': String(STORE_RETRY_SECONDS),
  }),

  timeout: createError(
    'timeout',
    (ms: number) => `request: not answered within its deadline of ${ms} ms; its work was cancelled`,
  ),

  overloaded: createError('overloaded', () => 'all inference slots are busy; retry with backoff'),
};

/** The request was cancelled by its caller (client disconnected, signal aborted). */
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}
