// Heads refitted online from an organization's corrections. A decision is refitted once it has 8
// corrections of every outcome, then each time its corrections double (or when the operator asks:
// `decision-machine heads refit`), off the request path:
// - each correction is read once as it arrives (readings.ts), so a refit only fits; all of it on
//   the engine's background slots, which take no request's slot and run at a background CPU priority (nice 14);
// - one read or refit at a time in a process, in the order the corrections came;
// - one replica at a time per decision: a lease row in the store, renewed while the refit runs, so
//   a replica that dies gives it up within LEASE_MS;
// - the same cross-validation as `decision-machine fit`, and its route check on every correction
//   (the shipped decision's answer was kept with each reading); the head is stored only if it
//   wins, in one transaction that keeps the replaced version for `heads rollback`. A kill -9
//   mid-refit leaves the previous head serving and its corrections stored: the next correction
//   (or `heads refit`) starts the refit again.
import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine/engine.js';
import type { Heads } from '../heads/heads.js';
import { fitSignature, type LabelledLine, type SignatureReport } from '../heads/fit.js';
import { headId } from '../heads/signature.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Correction, Store } from '../store/store.js';
import { readKeptLine } from './hashed-texts.js';
import { Readings } from './readings.js';

export const PER_OUTCOME = 8;
const LEASE_MS = 30_000;
/** Kept decisions waiting to be read (DM_FEEDBACK_TEXTS=hash) at most; past it one is kept unread. */
const MAX_WAITING_DECISIONS = 256;

export type RefitResult = 'stored' | 'kept' | 'skipped' | 'failed';

/** How a refit ended, and what its fit came to when it fitted. */
export interface RefitOutcome {
  result: RefitResult;
  report?: SignatureReport;
}

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

/** A stored correction as the refits are told of it. */
export interface CorrectionNotice {
  organization: string;
  example: LabelledLine;
  /** The correction's id: its reading is kept under it. */
  id: string;
  /** What the shipped decision answered, when it made the corrected decision (no head did). */
  routeAnswer?: Record<string, unknown>;
  /** Corrections of the decision the organization has sent, this one included. */
  count: number;
}

export class Refits {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly readings: Readings;
  private readonly waiting = new Set<string>();
  /** Corrections a decision had at its last refit in this process (a head not stored asks again at twice as many). */
  private readonly attempted = new Map<string, number>();
  private readonly holder = randomUUID();
  private waitingDecisions = 0;
  private closed = false;

  constructor(private readonly options: RefitsOptions) {
    this.readings = new Readings(options.engine);
  }

  /** A refit running stops before its next job (its lease is given back, the previous head serves). */
  close(): void {
    this.closed = true;
  }

  /**
   * Told of each stored correction: reads it (one of a decision kept without its text was read
   * when it was decided, under the same id), then refits its decision when a refit is due.
   */
  corrected(notice: CorrectionNotice): void {
    if (this.closed) return;
    this.queue = this.queue
      .then(() =>
        notice.example.textSha256 ? undefined : this.readAndKeep(notice.id, notice.example, notice.routeAnswer),
      )
      .catch((err: unknown) =>
        this.options.log?.error('correction not read yet (its refit reads it)', { id: notice.id, error: String(err) }),
      )
      .then(() => {
        if (this.due(notice)) void this.refit(notice.organization, notice.example.sig.id);
      });
  }

  /**
   * Reads a decision as it is kept without its text, while the text is in memory, and keeps the
   * reading under its id for the correction that may come. `routeAnswer`: what it answered, when
   * no head made it. Past MAX_WAITING_DECISIONS waiting, the decision is kept unread: a correction
   * of it is stored and counted, but cannot be fitted on.
   */
  decided(id: string, example: LabelledLine, routeAnswer?: Record<string, unknown>): void {
    if (this.closed) return;
    if (this.waitingDecisions >= MAX_WAITING_DECISIONS) {
      this.options.log?.error('kept decision not read: too many waiting (its correction cannot be fitted)', { id });
      return;
    }
    this.waitingDecisions++;
    this.queue = this.queue
      .then(() => this.readAndKeep(id, example, routeAnswer))
      .catch((err: unknown) => this.options.log?.error('kept decision not read', { id, error: String(err) }))
      .finally(() => this.waitingDecisions--);
  }

  private due({ organization, example, count }: CorrectionNotice): boolean {
    const key = `${organization}\n${example.sig.id}`;
    const head = this.options.heads?.find(example.sig, organization);
    const own = head && head.organization === organization ? head.examples : 0;
    const last = Math.max(own, this.attempted.get(key) ?? 0);
    const due = last === 0 ? count >= PER_OUTCOME * example.sig.outcomes.length : count >= 2 * last;
    return due && !this.closed;
  }

  /** Reads one correction and keeps its reading under the correction's id. */
  private async readAndKeep(id: string, example: LabelledLine, routeAnswer?: Record<string, unknown>) {
    const reading = await this.readings.read(example, await this.options.model(), routeAnswer);
    await this.options.store.saveReading(id, reading);
    return reading;
  }

  /**
   * Refits one organization's decision from its corrections ('' is the deployment's), after the
   * refits queued before it. `force` refits with fewer than 8 corrections per outcome.
   */
  refit(organization: string, signature: string, force = false): Promise<RefitOutcome> {
    const key = `${organization}\n${signature}`;
    if (this.waiting.has(key)) return Promise.resolve({ result: 'skipped' });
    this.waiting.add(key);
    const run = this.queue.then(() => this.run(organization, signature, force).finally(() => this.waiting.delete(key)));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Resolves when every queued read and refit has ended, those queued meanwhile too (a read that
   * completes a decision's corrections queues its refit as it ends).
   */
  async settled(): Promise<void> {
    for (let seen: Promise<unknown> | undefined; seen !== this.queue;) await (seen = this.queue);
  }

  /**
   * Each correction's example and reading: the kept reading when this model and reading made it,
   * else read now and kept. One whose text was not kept and has no such reading is left out.
   */
  private async readAll(corrections: Correction[], examples: LabelledLine[], model: string) {
    const bound = Readings.bound(model);
    const out = [];
    for (const [i, c] of corrections.entries()) {
      if (this.closed) throw new Error('the service is stopping');
      const example = examples[i]!;
      if (c.reading?.model === bound) out.push({ example, reading: c.reading });
      else if (!example.textSha256) out.push({ example, reading: await this.readAndKeep(c.id, example) });
    }
    return out;
  }

  private async run(organization: string, signature: string, force: boolean): Promise<RefitOutcome> {
    const { store, log, metrics } = this.options;
    const lease = `refit:${organization}:${signature}`;
    const skipped = { result: 'skipped' } as const;
    const outcome = await (async (): Promise<RefitOutcome> => {
      if (!(await store.takeLease(lease, this.holder, LEASE_MS))) return skipped;
      const renew = setInterval(() => void store.takeLease(lease, this.holder, LEASE_MS).catch(() => {}), LEASE_MS / 3);
      try {
        const corrections = await store.corrections(organization, signature);
        if (corrections.length === 0) return skipped;
        const examples = corrections.map((c) => readKeptLine(JSON.parse(c.line) as Record<string, unknown>));
        this.attempted.set(`${organization}\n${signature}`, examples.length);
        if (!force && !everyOutcome(examples)) return skipped;
        // Another replica may have refitted it since this one was told (its heads poll the store).
        const id = headId(examples[0]!.sig, organization);
        const fitted = (await store.listHeads()).find((h) => h.id === id)?.examples ?? 0;
        if (!force && fitted > 0 && examples.length < 2 * fitted) return skipped;
        const started = performance.now();
        const model = await this.options.model();
        const read = await this.readAll(corrections, examples, model);
        if (read.length === 0) return skipped;
        const readable = read.map((r) => r.example);
        const report = await fitSignature(
          readable,
          read.map(({ example, reading }) => ({ hidden: reading.hidden, base: reading.base, label: example.outcome })),
          async (predictions) => ({
            examples: read.length,
            route: read.filter((r) => r.reading.route === r.example.outcome).length,
            head: readable.filter((e, i) => predictions[i] === e.outcome).length,
          }),
          { store, model, organization },
          started,
        );
        logReport(log, organization, report, performance.now() - started);
        if (!report.stored) return { result: 'kept', report };
        await this.options.heads?.reload();
        return { result: 'stored', report };
      } finally {
        clearInterval(renew);
        await store.releaseLease(lease, this.holder).catch(() => {});
      }
    })().catch((err: unknown) => {
      log?.error('refit failed', { organization, signature, error: String(err) });
      return { result: 'failed' } as const;
    });
    metrics?.refitted(outcome.result);
    return outcome;
  }
}

/** Whether every outcome of the decision has PER_OUTCOME corrections. */
function everyOutcome(examples: LabelledLine[]): boolean {
  const counts = new Array<number>(examples[0]!.sig.outcomes.length).fill(0);
  for (const e of examples) counts[e.outcome]!++;
  return counts.every((n) => n >= PER_OUTCOME);
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
