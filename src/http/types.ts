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
}
