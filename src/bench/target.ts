// What a sweep measures: an HTTP address, and where its cost can be read. Three kinds, called by
// the same clients over loopback or the network:
// - in process: the service this process opens (src/service.ts) on a loopback port, with the
//   metrics of `decision-machine serve` (the clients share the process, so its CPU includes them);
// - a deployment at --url: slots from its GET /, slot waits from its GET /metrics, CPU and
//   memory from /proc when --pid names its process;
// - llama.cpp's llama-server (--peer): CPU and memory of its process, no slot waits.
import { readFileSync } from 'node:fs';
import { loadConfig, type Config } from '../config.js';
import { Gate } from '../auth/gate.js';
import type { Feedback } from '../feedback/feedback.js';
import { routes } from '../http/routes.js';
import { serve } from '../http/uws.js';
import { createLogger } from '../log.js';
import { Metrics } from '../metrics.js';
import { openService } from '../service.js';
import type { Service } from '../http/routes.js';
import type { Buckets } from './stats.js';

export interface Target {
  engine: 'decision-machine' | 'llama-server';
  url: string;
  /** Sent with every request (a deployment's key). */
  headers: Record<string, string>;
  slots: number | null;
  threads: number | null;
  model: string;
  /** The process whose CPU time and memory a row reports, when known. */
  pid?: number;
  /** The slot-wait histogram now (cumulative), when the target keeps one. */
  slotWaits?(): Promise<Buckets>;
  close(): Promise<void>;
}

/** A service opened in this process and served on a loopback port, as `decision-machine serve` serves it. */
export interface InProcessService {
  url: string;
  service: Service;
  close(): Promise<void>;
}

/**
 * Opens the service of `config` (its port and log level as given: 0 and silent for a bench) behind
 * the HTTP front, with the metrics of `decision-machine serve` (GET /metrics, slot waits).
 */
export async function serveInProcess(config: Config): Promise<InProcessService> {
  const service = await openService(config);
  const metrics = new Metrics(() => service.engine.stats());
  service.engine.onSlotWait = (seconds) => metrics.slotWait(seconds);
  return serveService(service, config, new Gate({ metrics }), undefined, createLogger(config.logLevel));
}

/**
 * `service` served over HTTP on loopback at `config`'s port (0: a free one), behind `gate` (none:
 * keys, limits and metrics off; its metrics, when it has them, at GET /metrics); closing stops the
 * server and the engine.
 */
export async function serveService(
  service: Service,
  config: Config,
  gate?: Gate,
  feedback?: Feedback,
  log = createLogger('silent'),
): Promise<InProcessService> {
  const server = await serve(routes(service, gate, feedback), {
    ...config,
    log,
    ...(gate?.options.metrics ? { metrics: gate.options.metrics } : {}),
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    service,
    close: async () => {
      server.close();
      await service.engine.close();
    },
  };
}

/**
 * The service of `config`, in this process, with queue places for every client beyond the slots
 * (so a row measures the slots, not refusals). Audio stays off.
 */
export async function openInProcess(config: Config, maxConcurrency: number): Promise<Target> {
  const queue = Math.max(0, maxConcurrency - config.slots);
  const settings = loadConfig({}, { ...config, port: 0, logLevel: 'silent', audio: 'off', queue });
  const { url, service, close } = await serveInProcess(settings);
  return {
    engine: 'decision-machine',
    url,
    headers: {},
    slots: settings.slots,
    threads: settings.threads,
    model: service.engine.info.description,
    pid: process.pid,
    slotWaits: () => scrapeSlotWaits(url),
    close,
  };
}

/** A running deployment; its key, if it checks keys, from DM_KEY. */
export async function reach(url: string, key: string | undefined, pid?: number): Promise<Target> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const res = await fetch(`${url}/`, { headers }).catch((err: Error) => {
    throw new Error(`${url}: ${err.message}`);
  });
  if (res.status !== 200) throw new Error(`${url}/: status ${res.status}`);
  const root = (await res.json()) as {
    engine?: { slots?: number; model?: string };
    links?: { metrics?: string | null };
  };
  return {
    engine: 'decision-machine',
    url,
    headers,
    slots: root.engine?.slots ?? null,
    threads: null,
    model: root.engine?.model ?? 'unknown',
    pid,
    slotWaits: root.links?.metrics ? () => scrapeSlotWaits(url) : undefined,
    close: async () => {},
  };
}

/** `dm_slot_wait_seconds`'s buckets from GET /metrics. */
async function scrapeSlotWaits(url: string): Promise<Buckets> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^dm_slot_wait_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => [
    m[1] === '+Inf' ? Infinity : Number(m[1]),
    Number(m[2]),
  ]);
}

/** A process's CPU time (user + system, seconds) and resident memory (MiB), from /proc. */
export function processUsage(pid: number): { cpuSeconds: number; rssMiB: number } {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return { cpuSeconds: ticks / CLOCK_TICKS, rssMiB: rssKiB / 1024 };
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;
