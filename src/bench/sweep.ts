// The sweep: for every engine shape (slots x threads; one shape, the deployment's, with --url) the
// engine is opened once, and every row of the rest of the cross product is warmed up, then
// measured `repetitions` times. With --peer, llama-server runs beside the service on the same
// model file with the same slots, threads, context and batch, and each repetition of a yes-no or
// classify row is measured on both, in turns, with the same texts (so load from elsewhere falls
// on both alike).
import { createServer } from 'node:net';
import { availableParallelism, cpus, loadavg } from 'node:os';
import type { Config } from '../config.js';
import { resolveModel, storeOptions } from '../models/store.js';
import { ensureLlamaServer, startLlamaServer } from './llama-server.js';
import { closedLoop, post, type Measurement, type Send } from './load.js';
import { peerRequest, type PeerCapability } from './peer.js';
import { settingsOf, type Plan, type Setting } from './plan.js';
import { bucketDelta, bucketQuantile, percentile, spread, type Spread } from './stats.js';
import { openInProcess, processUsage, reach, type Target } from './target.js';
import { TextGenerator } from './texts.js';
import { decisionsOf, requestBody, routeOf, type Workload } from './workloads.js';

/** One row: a setting measured `repetitions` times; counts are totals, rates mean ± sd. */
export interface Row extends Setting {
  repetitions: number;
  /** Answered requests (200), decisions they asked, 529s and other failures, all repetitions. */
  requests: number;
  decisionsPerRequest: number;
  decisions: number;
  refused: number;
  errors: number;
  decisionsPerSecond: Spread;
  requestsPerSecond: Spread;
  inputTokensPerSecond: Spread;
  p50Ms: Spread;
  p90Ms: Spread;
  p99Ms: Spread;
  /** Per job, from the target's dm_slot_wait_seconds histogram; null where it keeps none. */
  slotWaitP50Ms: Spread | null;
  /** Of all the machine's CPUs, while measured; null without the target's process. */
  cpuPercent: Spread | null;
  rssMiB: Spread | null;
  firstError?: string;
}

export interface Sweep {
  date: string;
  command: string;
  machine: { cpus: number; cpuModel: string; loadAverageAtStart: number[]; node: string };
  model: string;
  /** Of the generated texts: --seed repeats them. */
  seed: number;
  /** How the in-process engine differs from a deployment's settings. */
  note: string;
  rows: Row[];
}

const PEER_CAPABILITIES: readonly string[] = ['yes-no', 'classify'] satisfies PeerCapability[];

/** Runs `plan`; `progress` gets one line per row measured. */
export async function runSweep(plan: Plan, config: Config, progress: (line: string) => void): Promise<Sweep> {
  const sweep: Sweep = {
    date: new Date().toISOString(),
    command: `decision-machine bench ${process.argv.slice(3).join(' ')}`.trim(),
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
      node: process.version,
    },
    model: '',
    seed: plan.seed,
    note: plan.url
      ? `the deployment at ${plan.url} with its own settings`
      : 'in process: the service behind its HTTP front on loopback, queue places for every client beyond the slots, audio off; the clients share its process and CPU',
    rows: [],
  };
  const texts = new TextGenerator(plan.seed);
  const shapes: [number | null, number | null][] = plan.url
    ? [[null, null]]
    : plan.slots.flatMap((s) => plan.threads.map((t): [number, number] => [s, t]));
  const maxConcurrency = Math.max(...plan.concurrency);
  for (const [slots, threads] of shapes) {
    const service = plan.url
      ? await reach(plan.url, process.env.DM_KEY, plan.pid)
      : await openInProcess({ ...config, slots: slots!, threads: threads! }, maxConcurrency);
    sweep.model = service.model;
    let peer: Target | undefined;
    try {
      if (plan.peer) peer = await openPeer(config, slots!, threads!);
      for (const setting of settingsOf(plan, service.slots, service.threads)) {
        const targets: Target[] = peer && PEER_CAPABILITIES.includes(setting.capability) ? [service, peer] : [service];
        const requests = new RequestSource(plan, setting, texts);
        const warm = requests.repetition();
        for (const target of targets)
          if (plan.warmup > 0)
            await closedLoop(sender(target, setting.capability, warm), setting.concurrency, { requests: plan.warmup });
        const measured = new Map<Target, Repetition[]>(targets.map((t) => [t, []]));
        for (let r = 0; r < plan.repetitions; r++) {
          const bodies = requests.repetition();
          // Turn about from one repetition to the next, so neither engine always goes first.
          for (const target of r % 2 === 0 ? targets : [...targets].reverse())
            measured
              .get(target)!
              .push(await measure(target, sender(target, setting.capability, bodies), setting.concurrency, plan));
        }
        for (const target of targets) {
          const row = rowOf({ ...setting, engine: target.engine }, measured.get(target)!, requests.decisionsPerRequest);
          sweep.rows.push(row);
          progress(describe(row));
        }
      }
    } finally {
      await peer?.close();
      await service.close();
    }
  }
  return sweep;
}

/**
 * The bodies of a row: generated from its shape (a new text for every request, or 8 texts in turn
 * with --reuse), or the file's requests of its capability, in turn. Each repetition is a
 * list of bodies made on demand, which every engine of the row reads in the same order.
 */
class RequestSource {
  private readonly pool: string[] = [];
  private taken = 0;

  constructor(
    private readonly plan: Plan,
    private readonly setting: Omit<Setting, 'engine'>,
    private readonly texts: TextGenerator,
  ) {
    if (plan.reuse) for (let i = 0; i < 8; i++) this.pool.push(texts.next(setting.textChars!));
  }

  /** Decisions of one generated request (the file's vary: null). */
  get decisionsPerRequest(): number | null {
    return this.plan.requests ? null : decisionsOf(this.setting.capability, this.body());
  }

  repetition(): (k: number) => Record<string, unknown> {
    const made: Record<string, unknown>[] = [];
    return (k) => {
      while (made.length <= k) made.push(this.body());
      return made[k]!;
    };
  }

  private body(): Record<string, unknown> {
    const { capability } = this.setting;
    if (this.plan.requests) {
      const own = this.plan.requests.filter((r) => r.cap === capability);
      return own[this.taken++ % own.length]!.req;
    }
    const n = this.setting.batch ?? 1;
    const text = () =>
      this.plan.reuse ? this.pool[this.taken++ % this.pool.length]! : this.texts.next(this.setting.textChars!);
    const shape = { batch: n, questions: this.setting.questions ?? 1, labels: this.setting.labels ?? 2 };
    return requestBody(capability, Array.from({ length: n }, text), shape);
  }
}

/** The requests of a repetition, in order, as `target` is sent them. */
function sender(target: Target, capability: Workload, bodies: (k: number) => Record<string, unknown>) {
  let k = 0;
  return async (): Promise<{ send: Send; decisions: number }> => {
    const body = bodies(k++);
    if (target.engine === 'llama-server') return peerRequest(target.url, capability as PeerCapability, body);
    const batch = Array.isArray(body.states) ? body.states.length : 1;
    return {
      send: post(`${target.url}${routeOf(capability, batch)}`, target.headers, JSON.stringify(body)),
      decisions: decisionsOf(capability, body),
    };
  };
}

interface Repetition extends Measurement {
  slotWaitP50Ms: number | null;
  cpuPercent: number | null;
  rssMiB: number | null;
}

async function measure(
  target: Target,
  next: ReturnType<typeof sender>,
  concurrency: number,
  plan: Plan,
): Promise<Repetition> {
  const usage = () => (target.pid === undefined ? undefined : processUsage(target.pid));
  const [cpu0, waits0] = [usage(), await target.slotWaits?.()];
  const m = await closedLoop(next, concurrency, plan.stop);
  const [cpu1, waits1] = [usage(), await target.slotWaits?.()];
  const waits = waits0 && waits1 ? bucketQuantile(bucketDelta(waits0, waits1), 0.5) * 1000 : NaN;
  return {
    ...m,
    slotWaitP50Ms: Number.isFinite(waits) ? waits : null,
    cpuPercent: cpu0 && cpu1 ? (100 * (cpu1.cpuSeconds - cpu0.cpuSeconds)) / m.seconds / availableParallelism() : null,
    rssMiB: cpu1 ? cpu1.rssMiB : null,
  };
}

function rowOf(setting: Setting, reps: Repetition[], perRequest: number | null): Row {
  const sum = (f: (m: Repetition) => number) => reps.reduce((s, m) => s + f(m), 0);
  const over = (f: (m: Repetition) => number) => spread(reps.map(f));
  const optional = (f: (m: Repetition) => number | null) =>
    reps.every((m) => f(m) !== null) ? over((m) => f(m)!) : null;
  const requests = sum((m) => m.requests);
  const decisions = sum((m) => m.decisions);
  return {
    ...setting,
    repetitions: reps.length,
    requests,
    decisionsPerRequest: perRequest ?? (requests > 0 ? decisions / requests : 0),
    decisions,
    refused: sum((m) => m.refused),
    errors: sum((m) => m.errors),
    decisionsPerSecond: over((m) => m.decisions / m.seconds),
    requestsPerSecond: over((m) => m.requests / m.seconds),
    inputTokensPerSecond: over((m) => m.inputTokens / m.seconds),
    p50Ms: over((m) => percentile(m.latenciesMs, 50)),
    p90Ms: over((m) => percentile(m.latenciesMs, 90)),
    p99Ms: over((m) => percentile(m.latenciesMs, 99)),
    slotWaitP50Ms: optional((m) => m.slotWaitP50Ms),
    cpuPercent: optional((m) => m.cpuPercent),
    rssMiB: optional((m) => m.rssMiB),
    ...(reps.find((m) => m.firstError) ? { firstError: reps.find((m) => m.firstError)!.firstError } : {}),
  };
}

function describe(row: Row): string {
  const shape = (['slots', 'threads', 'concurrency', 'batch', 'questions', 'textChars', 'labels'] as const)
    .filter((k) => row[k] !== null)
    .map((k) => `${k} ${row[k]}`)
    .join(', ');
  const errors = row.refused + row.errors > 0 ? `, ${row.refused} x 529, ${row.errors} errors` : '';
  return `${row.engine} ${row.capability} (${shape}): ${row.decisionsPerSecond.mean.toFixed(2)} decisions/s, p99 ${row.p99Ms.mean.toFixed(0)} ms${errors}${row.firstError ? ` (${row.firstError})` : ''}`;
}

/** llama-server on the service's model file, with the given slots and threads. */
async function openPeer(config: Config, slots: number, threads: number): Promise<Target> {
  const bin = ensureLlamaServer();
  const model = await resolveModel(config.model, { ...storeOptions(config), path: config.modelPath });
  const server = await startLlamaServer(bin, {
    model,
    port: await freePort(),
    threads,
    slots,
    contextPerSlot: config.contextSize,
    batch: config.batchSize,
  });
  return {
    engine: 'llama-server',
    url: server.url,
    headers: {},
    slots,
    threads,
    model,
    pid: server.pid,
    close: async () => server.stop(),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}
