// Transport-neutral request and reply: handlers never see uWebSockets.js.
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
}

export interface ApiReply {
  status: number;
  /** Serialised as JSON unless contentType says otherwise (then it must be a string). */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
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
}
