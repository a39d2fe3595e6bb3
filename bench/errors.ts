// Error-path latency under load: client threads keep C connections busy with a mix of error
// requests (400 invalid, 401 missing / invalid key, 404 unrouted, 413 over the cap, 429 rate
// limited, 529 overloaded while valid calls hold every slot) against the real HTTP stack with
// key checking on (SQLite store). Latency is measured at the client, per class. Prints a table
// and writes its run into bench/results/errors.json.
//
//   node dist/bench/errors.js [--seconds 15] [--connections 32] [--rate 1000] [--engine fake|model]
//
// The load is paced: `rate` error requests per second in all, spread over the connections, so
// the latency measured is the service's answer time at that load rather than the queueing of a
// saturated closed loop (a connection whose answer is late sends its next request at once).
//
// --engine fake (default) uses the test suite's fake native binding with 2 slots whose jobs
// last the whole run: errors never reach the model, so this measures the service's own error path.
// --engine model loads the default model and keeps both slots busy with real inference.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { connect, type Socket } from 'node:net';
import { recordRun, serveService } from './harness.js';

interface Target {
  url: string;
  /** Milliseconds between two requests of one connection. */
  intervalMs: number;
  key: string;
  limitedKey: string;
  seconds: number;
  connections: number;
}

const CLASSES = [
  '400 invalid_request',
  '401 missing_api_key',
  '401 invalid_api_key',
  '404 unrouted',
  '413 payload_too_large',
  '429 rate_limit_exceeded',
  '529 overloaded',
] as const;

if (isMainThread) await main();
else await load(workerData as Target);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '15' },
      connections: { type: 'string', default: '32' },
      rate: { type: 'string', default: '1000' },
      engine: { type: 'string', default: 'fake' },
    },
  });
  const { loadConfig } = await import('../src/config.js');
  const { Engine } = await import('../src/engine/engine.js');
  const { serviceOf } = await import('../src/service.js');
  const { createLogger } = await import('../src/log.js');
  const { openAccess } = await import('../src/auth/access.js');
  const { issueKey } = await import('../src/auth/keys.js');
  const { resolveModel } = await import('../src/models/store.js');

  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-errors-'));
  const config = loadConfig(process.env, {
    port: 0,
    logLevel: 'silent',
    auth: 'on',
    databaseUrl: join(dir, 'service.db'),
    rateLimit: 1_000_000,
    maxBodyBytes: 64 * 1024,
    queue: 0,
    slots: 2,
  });
  const engine =
    values.engine === 'model'
      ? await Engine.open({ ...config, modelPath: await resolveModel(config.model, { path: config.modelPath }) })
      : await Engine.open(
          { ...config, threads: 1, modelPath: 'fake' },
          (await import('../test/helpers/fake-binding.js')).fakeBinding({
            delayMs: (Number(values.seconds) + 5) * 1000,
          }),
        );
  const access = await openAccess(config, () => engine.stats(), createLogger('silent'));
  const server = await serveService(serviceOf(engine), config, access.gate);
  const url = server.url;
  const { key } = await issueKey(access.store, 'prod', 'bench');
  const limited = await issueKey(access.store, 'prod', 'limited');

  // Valid calls that hold both slots for the whole run, so decision calls get 529.
  const text = 'The committee reviewed the annual budget and postponed the vote on the new library wing. '.repeat(40);
  const stop = new AbortController();
  const hold = async () => {
    while (!stop.signal.aborted) {
      const res = await fetch(`${url}/v1/decision-machine-1/classify`, {
        method: 'POST',
        signal: stop.signal,
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ text, labels: ['budget', 'sports', 'weather'] }),
      }).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      // lost the slot to a probe: try again shortly
      if (res?.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
  };
  const holders = [hold(), hold()];
  await new Promise((r) => setTimeout(r, 200));

  // The limited key's minute is used up here (again whenever a new window starts), so each of
  // its calls is a genuine 429 from the limiter.
  const limiter = access.gate.options.limiter!;
  const useUp = async () => {
    const { remaining } = await limiter.take(limited.record.id, 0);
    if (remaining > 0) await limiter.take(limited.record.id, remaining);
  };
  await useUp();
  const refill = setInterval(() => void useUp(), 250);
  const threads = 1; // one client thread with bare sockets drives thousands of requests per second
  const connections = Number(values.connections);
  const target: Omit<Target, 'connections'> = {
    url,
    key,
    limitedKey: limited.key,
    seconds: Number(values.seconds),
    intervalMs: (1000 * connections) / Number(values.rate),
  };
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = Date.now();
  const results = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<Record<string, number[]>>((resolve, reject) => {
          const worker = new Worker(fileURLToPath(import.meta.url), {
            workerData: { ...target, connections: Math.ceil(connections / threads) },
          });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  const elapsed = (Date.now() - started) / 1000;
  stop.abort();
  clearInterval(refill);
  loop.disable();
  const eventLoop = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };

  const rows: Record<string, { n: number; p50: number; p95: number; p99: number; max: number }> = {};
  const all: number[] = [];
  for (const name of [...CLASSES, 'other']) {
    const ms = results.flatMap((r) => r[name] ?? []).sort((a, b) => a - b);
    all.push(...ms);
    if (ms.length > 0) rows[name] = stats(ms);
  }
  all.sort((a, b) => a - b);
  const summary = { ...stats(all), perSecond: Math.round(all.length / elapsed) };
  console.log(
    `error replies under load: ${values.rate}/s offered over ${connections} connections for ${elapsed.toFixed(1)} s, both slots busy, engine ${values.engine}; other work may share this machine`,
  );
  console.log('class                      n       p50 ms  p95 ms  p99 ms  max ms');
  for (const [name, r] of [...Object.entries(rows), ['all errors', summary] as const]) {
    console.log(
      `${name.padEnd(26)} ${String(r.n).padStart(7)} ${r.p50.toFixed(2).padStart(7)} ${r.p95.toFixed(2).padStart(7)} ${r.p99.toFixed(2).padStart(7)} ${r.max.toFixed(2).padStart(7)}`,
    );
  }
  console.log(
    `${summary.perSecond} error replies/s; p99 ${summary.p99.toFixed(2)} ms (target <= 5 ms); service event-loop delay p99 ${eventLoop.p99.toFixed(1)} ms, max ${eventLoop.max.toFixed(1)} ms`,
  );
  recordRun('errors', {
    engine: values.engine,
    offeredPerSecond: Number(values.rate),
    connections,
    seconds: elapsed,
    eventLoopDelayMs: eventLoop,
    classes: rows,
    all: summary,
  });

  await server.close();
  await Promise.all(holders);
  await access.close();
  rmSync(dir, { recursive: true, force: true });
}

function stats(sorted: number[]) {
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

// A client thread: `connections` keep-alive sockets, each sending one error request after
// another. A bare HTTP/1.1 client (a few microseconds per request) so that the figure is the
// service's, not the load generator's.
async function load(target: Target): Promise<void> {
  const { port } = new URL(target.url);
  const yesNo = '/v1/decision-machine-1/yes-no';
  const req = (path: string, body: string, authorization?: string) =>
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${authorization ? `authorization: Bearer ${authorization}\r\n` : ''}\r\n${body}`,
    );
  const requests: Record<(typeof CLASSES)[number], Buffer> = {
    '400 invalid_request': req(yesNo, '{"text": "", "statement": 5}', target.key),
    '401 missing_api_key': req(yesNo, '{"text": "a"}'),
    '401 invalid_api_key': req(yesNo, '{"text": "a"}', 'prod_sk-acme-000000000000000000000000000000000000'),
    '404 unrouted': Buffer.from(`GET /v1/nothing HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${target.key}\r\n\r\n`),
    '413 payload_too_large': req(yesNo, JSON.stringify({ text: 'x'.repeat(70 * 1024) }), target.key),
    '429 rate_limit_exceeded': req(
      yesNo,
      JSON.stringify({ texts: Array(33).fill('a'), statement: 's' }),
      target.limitedKey,
    ),
    '529 overloaded': req(yesNo, '{"text": "a", "statement": "b"}', target.key),
  };
  const times: Record<string, number[]> = {};
  const deadline = performance.now() + target.seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: target.connections }, async () => {
      let conn = await open(Number(port));
      let next = performance.now() + Math.random() * target.intervalMs;
      while (next < deadline) {
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
        next += target.intervalMs;
        const name = CLASSES[n++ % CLASSES.length]!;
        const started = performance.now();
        const status = await conn.send(requests[name]).catch(() => 0);
        const ms = performance.now() - started;
        (times[name.startsWith(String(status)) ? name : 'other'] ??= []).push(ms);
        // The service closes the connection after a 413 (it will not read the rest of the upload).
        if (conn.closed || status === 413) {
          conn.socket.destroy();
          conn = await open(Number(port));
        }
      }
      conn.socket.destroy();
    }),
  );
  parentPort!.postMessage(times);
}

/** One keep-alive connection; send() resolves with the status once the whole response is in. */
function open(port: number): Promise<{ socket: Socket; closed: boolean; send(bytes: Buffer): Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let pending: ((status: number) => void) | undefined;
    let buffer = Buffer.alloc(0);
    const conn = {
      socket,
      closed: false,
      send(bytes: Buffer) {
        return new Promise<number>((done) => {
          pending = done;
          socket.write(bytes);
        });
      },
    };
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.toString('latin1', 0, end);
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.subarray(end + 4 + length);
      const settle = pending;
      pending = undefined;
      settle?.(Number(head.slice(9, 12)));
    });
    const closed = () => {
      conn.closed = true;
      pending?.(0);
      pending = undefined;
    };
    socket.on('close', closed);
    socket.on('error', closed);
    socket.once('connect', () => resolve(conn));
    socket.once('error', reject);
  });
}
