// Transport-neutral request and reply: handlers never see uWebSockets.js.
import type { ServiceError } from '../errors.js';
import type { AnswerDrafts } from '../feedback/kept.js';

export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  id: string;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** Fields added to this request's log line (key id, organization); never texts or keys. */
  log: Record<string, unknown>;
  /** The caller's organization, set by the gate on /v1 routes ('public' with keys off). */
  organization?: string;
}

/** What a model call is billed for: the transport writes it as x-input-*, the gate meters and records it. */
export interface Billing {
  inputTokens: number;
  /** Characters of every user-supplied string that reached the model (text routes). */
  inputChars?: number;
}

export interface ApiReply {
  status: number;
  /** Serialised as JSON unless contentType says otherwise (then it must be a string). */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Set by model routes: written as x-input-tokens (and x-input-chars). */
  billing?: Billing;
  /** The model work's time on the server, ms: written as x-inference-ms. */
  inferenceMs?: number;
  /** The decisions this answer made that may be corrected: kept with its usage row by the gate. */
  decisions?: AnswerDrafts;
}

export type Handler = (req: ApiRequest) => Promise<ApiReply>;

export interface Route {
  method: 'get' | 'post';
  path: string;
  handler: Handler;
  /** This route's body cap, bytes, when it differs from the server's (audio uploads). */
  maxBodyBytes?: number;
  /**
   * Throws `overloaded` when the service would not admit this route's request now: checked before
   * the body is read, so a refusal costs no parsing.
   */
  admissible?: () => void;
  /** Requests this call counts against a key's per-minute limit (1 when absent), from the body as sent. */
  cost?: (req: ApiRequest) => number;
  /** How this route's errors are written (System One's wire); the spec's envelope when absent. */
  errors?: (err: ServiceError) => ApiReply;
}
