// Heads refitted online from an organization's corrections. A decision is refitted once it has 8
// corrections of every outcome, then each time its corrections double (or when the operator asks:
// `decision-machine heads refit`), off the request path:
// - one refit at a time in a process, at a lower priority than requests: each job waits for an
//   engine with no request admitted and runs alone (src/heads/fit.ts `politely`);
// - one replica at a time per decision: a lease row in the store, renewed while the refit runs, so
//   a replica that dies gives it up within LEASE_MS;
// - the same cross-validation and route check as `decision-machine fit`; the head is stored only
//   if it wins, in one transaction that keeps the replaced version for `heads rollback`. A kill -9
//   mid-refit leaves the previous head serving and its corrections stored: the next correction
//   (or `heads refit`) starts the refit again.
import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine/engine.js';
import type { Heads } from '../heads/heads.js';
import { fitHeads, readLine, type Labelled, type SignatureReport } from '../heads/fit.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';

export const PER_OUTCOME = 8;
const LEASE_MS = 30_000;
const ROUTE_SECONDS = 20; // the route check's budget online (the CLI's is 60 s)
const IDLE_POLL_MS = 5;

export type RefitResult = 'stored' | 'kept' | 'skipped' | 'failed';

export interface RefitsOptions {
  engine: Engine;
  store: Store;
  /** The model's SHA-256 (src/models/identity.ts), recorded in each head. */
  model: () => Promise<string>;
  /** Reloaded after a head is stored, so this replica applies it at once (the others within 5 s). */
  heads?: Heads;
  log?: Logger;
  metrics?: Metrics;
}

export class Refits {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Set<string>();
  /** Corrections a decision had at its last refit in this process (a head not stored asks again at twice as many). */
  private readonly attempted = new Map<string, number>();
  private readonly holder = randomUUID();
  private closed = false;

  constructor(private readonly options: RefitsOptions) {}

  /** A refit running stops before its next job (its lease is given back, the previous head serves). */
  close(): void {
    this.closed = true;
  }

  /** Told of each stored correction: queues a refit of its decision when one is due. */
  corrected(organization: string, example: Labelled, count: number): void {
    const key = `${organization}\n${example.sig.id}`;
    const head = this.options.heads?.find(example.sig, organization);
    const own = head && head.organization === organization ? head.examples : 0;
    const last = Math.max(own, this.attempted.get(key) ?? 0);
    const due = last === 0 ? count >= PER_OUTCOME * example.sig.outcomes.length : count >= 2 * last;
    if (due && !this.closed) void this.refit(organization, example.sig.id);
  }

  /**
   * Refits one organization's decision from its corrections ('' is the deployment's), after the
   * refits queued before it. `force` refits with fewer than 8 corrections per outcome.
   */
  refit(organization: string, signature: string, force = false): Promise<RefitResult> {
    const key = `${organization}\n${signature}`;
    if (this.waiting.has(key)) return Promise.resolve('skipped');
    this.waiting.add(key);
    const run = this.queue.then(() => this.run(organization, signature, force).finally(() => this.waiting.delete(key)));
    this.queue = run.catch(() => {});
    return run;
  }

  /** Resolves when every queued refit has ended. */
  async settled(): Promise<void> {
    await this.queue;
  }

  private async run(organization: string, signature: string, force: boolean): Promise<RefitResult> {
    const { store, engine, log, metrics } = this.options;
    const lease = `refit:${organization}:${signature}`;
    const result = await (async (): Promise<RefitResult> => {
      if (!(await store.takeLease(lease, this.holder, LEASE_MS))) return 'skipped';
      const renew = setInterval(() => void store.takeLease(lease, this.holder, LEASE_MS).catch(() => {}), LEASE_MS / 3);
      try {
        const examples = (await store.corrections(organization, signature)).map((c) => readLine(JSON.parse(c.line)));
        if (examples.length === 0) return 'skipped';
        this.attempted.set(`${organization}\n${signature}`, examples.length);
        if (!force && !everyOutcome(examples)) return 'skipped';
        const started = performance.now();
        const [report] = await fitHeads(engine, examples, {
          store,
          model: await this.options.model(),
          organization,
          routeSeconds: ROUTE_SECONDS,
          politely: () => (this.closed ? Promise.reject(new Error('the service is stopping')) : idle(engine)),
        });
        logReport(log, organization, report, performance.now() - started);
        if (!report?.stored) return 'kept';
        await this.options.heads?.reload();
        return 'stored';
      } finally {
        clearInterval(renew);
        await store.releaseLease(lease, this.holder).catch(() => {});
      }
    })().catch((err: unknown) => {
      log?.error('refit failed', { organization, signature, error: String(err) });
      return 'failed' as const;
    });
    metrics?.refitted(result);
    return result;
  }
}

/** Whether every outcome of the decision has PER_OUTCOME corrections. */
function everyOutcome(examples: Labelled[]): boolean {
  const counts = new Array<number>(examples[0]!.sig.outcomes.length).fill(0);
  for (const e of examples) counts[e.outcome]!++;
  return counts.every((n) => n >= PER_OUTCOME);
}

/** Resolves once no request is admitted: a refit's next job takes no slot a request is waiting for. */
async function idle(engine: Engine): Promise<void> {
  while (engine.stats().inflight > 0) await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
}

function logReport(log: Logger | undefined, organization: string, r: SignatureReport | undefined, ms: number) {
  if (!r) return;
  log?.info('refit', {
    organization,
    head: r.id,
    examples: r.examples,
    zeroShot: r.zeroShot,
    fitted: r.fitted,
    route: r.route,
    stored: r.stored,
    seconds: Number((ms / 1000).toFixed(1)),
    note: r.note,
  });
}
