// The only file that knows uWebSockets.js. It reads bodies under a byte cap, turns client
// disconnects into AbortSignals, and writes replies corked, never after an abort. It listens on a
// private unix socket; the public port is the strict HTTP/1.1 front of front.ts.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type * as UWS from 'uWebSockets.js';
import { ERRORS, ServiceError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ApiReply, Route } from './types.js';
import { front } from './front.js';

/**
 * Loads the native uWS binary itself. The package's entry point silently falls back to a slow
 * pure-JS server when the binary does not load; we refuse to start instead.
 */
export function loadUws(): typeof UWS {
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return createRequire(import.meta.url)(binary) as typeof UWS;
  } catch (err) {
    throw new Error(`uWebSockets.js has no working native build for this Node (${binary}): ${(err as Error).message}`);
  }
}

export interface ServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** A 529 is sent this long after the refusal, so clients retrying at once cannot spin the CPU the slots need. */
  overloadDelayMs?: number;
  log: Logger;
  metrics?: Metrics;
}

export interface Server {
  readonly port: number;
  /** Stops accepting connections; resolves when open requests have been answered (src/http/front.ts). */
  close(): Promise<void>;
  /** Serves more routes from now on (the model's, once loaded); a route beats a wildcard one. */
  add(routes: Route[]): void;
}

export async function serve(routes: Route[], options: ServerOptions): Promise<Server> {
  const uws = loadUws();
  const app = uws.App();
  const add = (routes: Route[]) => {
    for (const route of routes) app[route.method](route.path, (res, req) => handle(route, res, req, options));
  };
  add(routes);
  app.any('/*', (res, req) => {
    options.metrics?.observe('unrouted', req.getCaseSensitiveMethod(), 404, 0);
    res.writeStatus('404 Not Found').writeHeader('content-type', 'text/plain').end('Not Found');
  });
  // A directory only this user can enter (mkdtemp makes it 0700): no one else reaches uWS past the front.
  const dir = mkdtempSync(join(tmpdir(), 'decision-machine-'));
  const upstream = join(dir, 'uws.sock');
  const listening = await new Promise<UWS.us_listen_socket>((resolve, reject) => {
    app.listen_unix(
      (socket) => (socket ? resolve(socket) : reject(new Error(`cannot listen on ${upstream}`))),
      upstream,
    );
  });
  const close = () => {
    uws.us_listen_socket_close(listening);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const public_ = await front({ host: options.host, port: options.port, upstream, log: options.log });
    return {
      port: public_.port,
      close: async () => {
        await public_.close();
        close();
      },
      add,
    };
  } catch (err) {
    close();
    throw new Error(`cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`);
  }
}

function handle(route: Route, res: UWS.HttpResponse, req: UWS.HttpRequest, options: ServerOptions): void {
  const started = performance.now();
  const controller = new AbortController();
  let aborted = false;
  let answered = false; // a reply was started
  let ended = false; // and written whole
  res.onAborted(() => {
    aborted = true;
    controller.abort();
  });
  // The request object is only valid in this synchronous part: copy what we need now. Header
  // names are the client's: a map without a prototype keeps `__proto__` an ordinary name.
  const headers: Record<string, string> = Object.create(null);
  req.forEach((k, v) => (headers[k] = v));
  const path = req.getUrl();
  const query = new URLSearchParams(req.getQuery() ?? '');
  const id = requestId(headers['x-request-id']);
  const log: Record<string, unknown> = {};

  const send = (reply: ApiReply) => {
    if (aborted || answered) return;
    answered = true;
    const body = reply.contentType ? String(reply.body) : JSON.stringify(reply.body);
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? 'Error'}`);
      res.writeHeader('content-type', reply.contentType ?? 'application/json');
      res.writeHeader('x-request-id', id);
      for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
      for (const [k, v] of Object.entries(modelHeaders(reply))) res.writeHeader(k, v);
      // A refused upload may still be streaming in: the front closes the client's connection and drops this one.
      res.end(body);
    });
    ended = true;
    const seconds = (performance.now() - started) / 1000;
    options.metrics?.observe(route.path, route.method.toUpperCase(), reply.status, seconds);
    options.log.info('request', {
      id,
      method: route.method.toUpperCase(),
      path,
      status: reply.status,
      ms: Math.round(seconds * 1000),
      ...log,
    });
  };
  // Anything unexpected, even in `send` itself, ends this request with the envelope, never the process.
  const fail = (err: unknown) => {
    if (aborted) return; // the client is gone: its job was cancelled, nothing to write
    if (err instanceof ServiceError && !answered) {
      options.metrics?.refused(err);
      const reply = () => send(route.errors?.(err) ?? { status: err.status, body: err.toJSON(), headers: err.headers });
      if (err.code === 'overloaded' && options.overloadDelayMs) return void setTimeout(reply, options.overloadDelayMs);
      return reply();
    }
    options.log.error('unhandled error', { id, path, error: String((err as Error)?.stack ?? err) });
    if (answered) return;
    const internal = ERRORS.internalError();
    send({ status: 500, body: internal.toJSON(), headers: internal.headers });
  };

  try {
    route.admissible?.();
  } catch (err) {
    return fail(err); // full: the body is left unread (uWS skips it by its length)
  }
  const body =
    route.method === 'get'
      ? Promise.resolve(Buffer.alloc(0))
      : readBody(res, route.maxBodyBytes ?? options.maxBodyBytes);
  body
    .then((body) =>
      route.handler({ method: route.method, path, query, headers, body, id, signal: controller.signal, log }),
    )
    .then(send)
    .catch(fail)
    .catch((err: unknown) => {
      options.log.error('could not answer', { id, path, error: String((err as Error)?.stack ?? err) });
      if (!aborted && !ended) res.close();
    });
}

/** A model reply's billing and time as headers: x-input-chars, x-input-tokens, x-inference-ms. */
function modelHeaders(reply: ApiReply): Record<string, string> {
  const out: Record<string, string> = {};
  if (reply.billing?.inputChars !== undefined) out['x-input-chars'] = String(reply.billing.inputChars);
  if (reply.billing) out['x-input-tokens'] = String(reply.billing.inputTokens);
  if (reply.inferenceMs !== undefined) out['x-inference-ms'] = String(reply.inferenceMs);
  return out;
}

/**
 * A client's x-request-id is kept when it is a plain token (it names the request in logs and the ledger); otherwise a
 * fresh one is made.
 */
function requestId(sent: string | undefined): string {
  return sent !== undefined && /^[A-Za-z0-9._:@+=\/-]{1,128}$/.test(sent) ? sent : randomUUID();
}

// Collects the body; rejects with payload_too_large as soon as it passes the cap.
function readBody(res: UWS.HttpResponse, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > max) {
        done = true;
        return reject(ERRORS.tooLarge('body', max));
      }
      chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after this call
      if (isLast) {
        done = true;
        resolve(Buffer.concat(chunks, size));
      }
    });
  });
}
