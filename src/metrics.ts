// Prometheus metrics, served at GET /metrics: requests and latency per route and status, slot
// occupancy read from the engine at scrape time, how long jobs waited for a slot, refusals by
// reason, billed input tokens. Route labels are the route patterns, never raw paths, so the
// series stay few.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineStats } from './engine/engine.js';
import { REFUSALS, type ServiceError } from './errors.js';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'dm_http_requests_total',
    help: 'HTTP responses by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'dm_http_request_duration_seconds',
    help: 'Time from request to response, by route pattern',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
    registers: [this.registry],
  });
  private readonly overloaded = new Counter({
    name: 'dm_overloaded_total',
    help: 'Requests refused with 529 overloaded (every slot and queue place taken)',
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'dm_refusals_total',
    help: 'Requests refused without an answer, by reason: overloaded (529), rate_limit and inflight_cap (429), deadline (504), not_ready (503)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly slotWaits = new Histogram({
    name: 'dm_slot_wait_seconds',
    help: 'Time each inference job waited for a slot (its time to result less its time on the slot)',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'dm_input_tokens_total',
    help: 'Input tokens billed (x-input-tokens of successful responses), by route pattern',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  private readonly journalledRows = new Counter({
    name: 'dm_usage_journalled_total',
    help: 'Usage rows the store could not take, written to the local journal instead',
    registers: [this.registry],
  });
  private readonly replayedRows = new Counter({
    name: 'dm_usage_replayed_total',
    help: 'Usage rows replayed from the journal into the store',
    registers: [this.registry],
  });
  private readonly unrecordedRows = new Counter({
    name: 'dm_usage_unrecorded_total',
    help: 'Answers withheld (503 store_unavailable) because neither the store nor the journal could take their usage row',
    registers: [this.registry],
  });

  private readonly feedback = new Counter({
    name: 'dm_feedback_total',
    help: 'Corrections stored (POST /v1/decision-machine-1/feedback), by capability',
    labelNames: ['capability'] as const,
    registers: [this.registry],
  });
  private readonly refits = new Counter({
    name: 'dm_refits_total',
    help: 'Online refits of heads from corrections, by result (stored, kept: the head did not win, skipped, failed)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly headAccuracy = new Gauge({
    name: 'dm_head_accuracy',
    help: "A head's accuracy on the corrections that judged its decisions since it was fitted (prequential)",
    labelNames: ['head'] as const,
    registers: [this.registry],
  });

  constructor(stats?: () => EngineStats) {
    for (const reason of REFUSALS) this.refusals.inc({ reason }, 0); // every reason is listed from the start
    if (!stats) return;
    // Read from the engine at scrape time: gauges, and counters whose totals the engine keeps.
    const scraped = (
      Metric: typeof Gauge | typeof Counter,
      name: string,
      help: string,
      read: (s: EngineStats) => number,
    ) =>
      new Metric({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(read(stats()));
        },
      });
    scraped(Gauge, 'dm_slots', 'Inference slots', (s) => s.slots);
    scraped(Gauge, 'dm_capacity', 'Requests admitted at once (slots + queue places)', (s) => s.capacity);
    scraped(Gauge, 'dm_slots_busy', 'Slots running a job now', (s) => s.running);
    scraped(Gauge, 'dm_jobs_queued', 'Jobs waiting for a slot', (s) => s.queued);
    scraped(Gauge, 'dm_requests_inflight', 'Requests admitted by the engine and not yet answered', (s) => s.inflight);
    scraped(
      Gauge,
      'dm_prompt_cache_bytes',
      'KV of earlier prompts kept in host memory for the slots',
      (s) => s.promptCacheBytes,
    );
    scraped(Gauge, 'dm_prompt_cache_prompts', 'Earlier prompts kept in host memory', (s) => s.promptCachePrompts);
    scraped(
      Counter,
      'dm_prompt_cache_loads_total',
      'Earlier prompts loaded back into a slot',
      (s) => s.promptCacheLoads,
    );
    scraped(
      Counter,
      'dm_prompt_cache_tokens_total',
      'Prompt tokens those loads spared a prefill',
      (s) => s.promptCacheTokens,
    );
    scraped(
      Counter,
      'dm_prompt_cache_borrows_total',
      "Prompts that took their text's KV from another capability's prompt",
      (s) => s.promptCacheBorrows,
    );
    scraped(
      Counter,
      'dm_prompt_cache_borrowed_tokens_total',
      'Text tokens those prompts did not prefill',
      (s) => s.promptCacheBorrowedTokens,
    );
  }

  /** One response. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.requests.inc({ route, method, status: String(status) });
    this.latency.observe({ route }, seconds);
    if (status === 529) this.overloaded.inc();
  }

  /** An error reply: counted by reason when it is a refusal. */
  refused(err: ServiceError): void {
    if (err.refusal) this.refusals.inc({ reason: err.refusal });
  }

  /** One job's wait for a slot (Engine.onSlotWait). */
  readonly slotWait = (seconds: number): void => {
    this.slotWaits.observe(seconds);
  };

  billed(route: string, inputTokens: number): void {
    this.tokens.inc({ route }, inputTokens);
  }

  corrected(capability: string): void {
    this.feedback.inc({ capability });
  }

  refitted(result: string): void {
    this.refits.inc({ result });
  }

  /** A head's live accuracy, as GET /v1/heads last computed it. */
  headAccurate(head: string, accuracy: number): void {
    this.headAccuracy.set({ head }, accuracy);
  }

  journalled(): void {
    this.journalledRows.inc();
  }

  replayed(rows: number): void {
    this.replayedRows.inc(rows);
  }

  unrecorded(): void {
    this.unrecordedRows.inc();
  }

  /** The journal's backlog and the store's state, read at scrape time. */
  watchJournal(read: () => { rows: number; bytes: number; ageSeconds: number; degraded: boolean }): void {
    const gauge = (name: string, help: string, value: (j: ReturnType<typeof read>) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(value(read()));
        },
      });
    gauge('dm_journal_rows', 'Usage rows in the journal not yet in the store', (j) => j.rows);
    gauge('dm_journal_bytes', 'Bytes of journal files not yet replayed', (j) => j.bytes);
    gauge('dm_journal_age_seconds', 'Age of the oldest usage row not yet in the store (0: none)', (j) => j.ageSeconds);
    gauge('dm_store_degraded', '1 while usage rows go to the journal (the store away or behind)', (j) =>
      Number(j.degraded),
    );
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
