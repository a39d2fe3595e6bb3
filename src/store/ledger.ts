// The usage ledger as the gate sees it: each delivered answer's row goes to the store, or, when
// the store cannot take it (the database away, a full disk), to the local journal, from which a
// background loop replays it, in order, once the store answers again. While the journal holds
// rows, new rows go there too, so they reach the store in the order they were delivered.
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { Journal } from './journal.js';
import type { Store, UsageEntry } from './store.js';

/** connecting: the store has not answered since start-up; up; degraded: rows wait in the journal. */
export type StoreState = 'connecting' | 'up' | 'degraded';

const RETRY_MS = 1000; // between replay attempts while the store is away
const BATCH_ROWS = 500; // rows per replay transaction

export class Ledger {
  /** False until the store has answered once since start-up (GET /ready waits for it). */
  connected = false;
  private failing = false;
  private replaying: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private oldest: number | undefined; // ms epoch of the oldest undelivered row

  constructor(
    private readonly store: Pick<Store, 'recordUsage' | 'ping'>,
    private readonly journal: Journal,
    private readonly log?: Logger,
    private readonly metrics?: Metrics,
  ) {
    metrics?.watchJournal(() => ({
      rows: journal.rows,
      bytes: journal.bytes,
      ageSeconds: this.oldest === undefined ? 0 : (Date.now() - this.oldest) / 1000,
      degraded: this.state === 'degraded',
    }));
    if (journal.rows > 0) log?.info('usage journal adopted', { rows: journal.rows, bytes: journal.bytes });
    this.replay();
  }

  /**
   * False while neither the store nor the journal can take a row (the database away and the
   * journal full or its disk refusing): the gate then refuses calls with 503 store_unavailable
   * rather than answer what it cannot bill. The journal is tried again a second after a refusal.
   */
  get accepting(): boolean {
    return !this.failing || !this.journal.refusedRecently(RETRY_MS);
  }

  get state(): StoreState {
    if (this.failing || !this.journal.empty) return 'degraded';
    return this.connected ? 'up' : 'connecting';
  }

  /**
   * Records a delivered answer's row: in the store, else durably in the journal. Rejects only
   * when neither can take it (the store failing and the journal full or its disk refusing).
   */
  async record(entry: UsageEntry): Promise<void> {
    if (this.journal.empty && !this.failing) {
      try {
        await this.store.recordUsage([entry]);
        this.connected = true;
        return;
      } catch (err) {
        this.fail(err);
      }
    }
    if (this.journal.empty) this.oldest = Date.parse(entry.at);
    try {
      await this.journal.append(entry);
      this.metrics?.journalled();
    } finally {
      this.replay();
    }
  }

  /** Tries to deliver what the journal holds, once more; the rest waits for the next process. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.replaying;
    await this.deliver().catch(() => {});
    await this.journal.close();
  }

  // One replay loop at a time; it ends when the journal is empty, or is retried after RETRY_MS.
  private replay(): void {
    if (this.replaying || this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    let delivered = 0;
    this.replaying = this.deliver((n) => (delivered += n))
      .then(
        () => {
          if (this.failing)
            this.log?.info('store answers again: usage journal replayed', { state: 'up', rows: delivered });
          this.failing = false;
        },
        (err: unknown) => {
          this.fail(err);
          this.timer = setTimeout(() => this.replay(), RETRY_MS);
        },
      )
      .finally(() => {
        this.replaying = undefined;
        // Rows that became durable while this round wrote its last batch: another round.
        if (!this.failing && delivered > 0 && this.journal.rows > 0) this.replay();
      });
  }

  // Pings the store (at start-up, and after a failure, so that a store that is back is seen with
  // the journal empty too), then writes the journal's rows to it in batches until none is left.
  private async deliver(progress: (rows: number) => void = () => {}): Promise<void> {
    if (!this.connected || this.failing) {
      await this.store.ping();
      this.connected = true;
    }
    for (let batch = await this.journal.next(BATCH_ROWS); batch; batch = await this.journal.next(BATCH_ROWS)) {
      this.oldest = Date.parse(batch.rows[0]!.at);
      await this.store.recordUsage(batch.rows);
      await this.journal.delivered(batch);
      this.metrics?.replayed(batch.rows.length);
      progress(batch.rows.length);
    }
    this.oldest = undefined;
  }

  private fail(err: unknown): void {
    if (!this.failing)
      this.log?.error('store unavailable: usage rows go to the journal until it answers', {
        state: 'degraded',
        journal: this.journal.file,
        error: String(err),
      });
    this.failing = true;
  }
}
