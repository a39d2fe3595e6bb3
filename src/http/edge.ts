// One table of the edge's limits, read by both servers: the public node:http front (front.ts,
// strict framing) and uWebSockets.js behind it (uws.ts). Body caps are settings (src/config.ts:
// DM_MAX_BODY_BYTES, DM_AUDIO_MAX_BYTES) passed to serve(); everything fixed is here, once.
export const EDGE = Object.freeze({
  /**
   * Header lines uWebSockets.js reads per request (fixed in its binary); a request with more is
   * dropped there without a reply, so the front refuses first.
   */
  uwsHeaderLines: 48,
  /** Header fields a request may carry (duplicates counted once); more get 431. */
  maxHeaderFields: 46, // uwsHeaderLines less the two lines the front adds to each forwarded request
  /** uWebSockets.js closes a connection idle for this long (fixed in its binary). */
  uwsIdleSeconds: 10,
  /** A kept-alive client connection with no request for this long is closed (announced in Keep-Alive). */
  keepAliveSeconds: 10, // as uWebSockets.js alone did
  /** A client connection that sends nothing for this long while a request is incomplete is closed (408). */
  idleSeconds: 8,
  /** A free front-to-uWS connection is dropped after this long, before uWS's idle close can race a reuse. */
  upstreamIdleMs: 4000,
  /** On close, replies under way get this long to be written before their connections are cut. */
  closeWaitSeconds: 10,
  /** How often the front checks its connections' timeouts. */
  checkIntervalMs: 1000,
});
