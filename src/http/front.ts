// The public listener. Node's HTTP/1.1 parser (llhttp, strict) reads every request's framing per
// RFC 9112 and passes well-framed ones to uWebSockets.js on a private unix socket; replies stream
// back with backpressure. A request whose framing is ambiguous (two Content-Lengths,
// Content-Length with Transfer-Encoding, obsolete line folding, HTTP/1.1 without Host) gets a
// 400 and a closed connection, so its body can never be read as a second request. Pipelined
// requests are answered in order; HTTP/1.0 is answered too.
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ERRORS, ServiceError } from '../errors.js';
import type { Logger } from '../log.js';
import { EDGE } from './edge.js';

export interface FrontOptions {
  host: string;
  port: number;
  /** The unix socket uWebSockets.js listens on. */
  upstream: string;
  log: Logger;
}

export interface Front {
  readonly port: number;
  /** Stops accepting connections; resolves when open requests have been answered (at most EDGE.closeWaitSeconds). */
  close(): Promise<void>;
}

// Connection-level headers (RFC 9110 7.6.1): they describe the client's hop, not the request.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function front(options: FrontOptions): Promise<Front> {
  const agent = new Agent({ keepAlive: true, timeout: EDGE.upstreamIdleMs });
  const pending = new WeakMap<Socket, number>(); // replies not yet finished, per client connection
  const server = createServer(
    {
      requireHostHeader: false,
      joinDuplicateHeaders: true,
      headersTimeout: EDGE.idleSeconds * 1000,
      requestTimeout: 0,
      // Replies announce it (Keep-Alive: timeout=10) so pooled clients drop it first rather than race the close.
      keepAliveTimeout: EDGE.keepAliveSeconds * 1000,
      connectionsCheckingInterval: EDGE.checkIntervalMs,
    },
    (req, res) => forward(req, res),
  );

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    pending.set(socket, (pending.get(socket) ?? 0) + 1);
    res.once('close', () => pending.set(socket, (pending.get(socket) ?? 1) - 1));
    const headers: Record<string, string> = Object.create(null);
    let fields = 0;
    for (const [name, value] of Object.entries(req.headers)) {
      if (HOP_BY_HOP.has(name) || value === undefined) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
      fields++;
    }
    if (fields > EDGE.maxHeaderFields)
      return refuse(req, res, 431, ERRORS.invalidRequest(`headers: more than ${EDGE.maxHeaderFields} header fields`));
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400.
    if (req.httpVersion === '1.1' && req.headers.host === undefined)
      return refuse(req, res, 400, ERRORS.invalidRequest('headers: Host is required in HTTP/1.1'));
    // A chunked body is forwarded chunked; any other body has its Content-Length (0 when absent).
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked) headers['content-length'] = req.headers['content-length'] ?? '0';
    // A stalled upload closes the connection after EDGE.idleSeconds, like a stalled header.
    socket.setTimeout(EDGE.idleSeconds * 1000);
    req.once('end', () => socket.setTimeout(0));

    const up = request({ socketPath: options.upstream, agent, method: req.method, path: req.url, headers }, (upRes) => {
      const out: Record<string, string | string[]> = Object.create(null);
      for (const [name, value] of Object.entries(upRes.headers))
        if (!HOP_BY_HOP.has(name) && value !== undefined && name !== 'date' && name !== 'uwebsockets')
          out[name] = value;
      // A refused upload may still be streaming in: close both connections rather than read the rest.
      if (upRes.statusCode === 413) {
        out.connection = 'close';
        upRes.once('end', () => up.destroy());
      }
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out);
      upRes.pipe(res);
    });
    // The client went away before its reply was written: dropping the upstream request aborts it in uWS (slot freed).
    let gone = false;
    res.once('close', () => {
      if (res.writableFinished) return;
      gone = true;
      up.destroy();
    });
    up.on('error', (err) => {
      if (gone) return;
      if (res.headersSent) return res.destroy();
      options.log.error('upstream error', { path: req.url, error: String(err) });
      refuse(req, res, 502, ERRORS.upstreamFailed());
    });
    req.pipe(up);
  }

  // Framing errors from the parser: a 400 (431 for oversized headers, 408 for a stall) with the
  // envelope, then close. When a reply is already under way on this connection, only close.
  server.on('clientError', (err: NodeJS.ErrnoException & { reason?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable || (pending.get(socket) ?? 0) > 0) return socket.destroy();
    const [status, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers: larger than the limit']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, `request: not received within ${EDGE.idleSeconds} s`]
          : [400, `request framing: ${err.reason ?? err.message}`];
    const body = JSON.stringify(ERRORS.invalidRequest(message).toJSON());
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${body}`,
    );
    socket.destroySoon();
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : options.port,
        close: () =>
          new Promise<void>((resolve) => {
            // A connection is closed as soon as it has no request under way: idle ones now, the
            // others once their reply is written.
            const sweep = setInterval(() => server.closeIdleConnections(), 20).unref();
            const bound = setTimeout(() => server.closeAllConnections(), EDGE.closeWaitSeconds * 1000).unref();
            server.close(() => {
              clearInterval(sweep);
              clearTimeout(bound);
              agent.destroy();
              resolve();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** Answers with the envelope and closes: the rest of what the client sent is not read. */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, err: ServiceError): void {
  const body = JSON.stringify(err.toJSON());
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': randomUUID(),
    connection: 'close',
  });
  res.end(body, () => req.socket.destroySoon());
}
