// Decisions that learn from use, as the server runs them: corrections stored (corrections.ts),
// heads refitted from them (refits.ts), kept decisions forgotten after the retention time (and, for
// a deployment that keeps no texts, kept as their texts' hashes and readings: hashed-texts.ts), and
// each head's live figures (GET /v1/heads, `decision-machine heads list`).
import type { Engine } from '../engine/engine.js';
import type { Heads } from '../heads/heads.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { Corrections } from './corrections.js';
import { readKeptLine, withoutText } from './hashed-texts.js';
import type { DecisionDraft } from './kept.js';
import { Refits } from './refits.js';

const FORGET_EVERY_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface FeedbackOptions {
  engine: Engine;
  store: Store;
  heads?: Heads;
  /** The model's SHA-256, asked once (src/models/identity.ts). */
  model: () => Promise<string>;
  retentionDays: number;
  /** 'hash': kept decisions and corrections keep their texts' SHA-256 and readings, not texts (DM_FEEDBACK_TEXTS). */
  texts?: 'keep' | 'hash';
  log?: Logger;
  metrics?: Metrics;
}

/** A head as GET /v1/heads lists it. */
export interface HeadListing {
  id: string;
  capability: string;
  /** null: the deployment's head; else the organization whose requests alone it decides. */
  organization: string | null;
  examples: number;
  /** When this version was fitted: its version (a refit or `fit` replaces it; rollback restores the one before). */
  fitted_at: string;
  /** Its decisions judged by corrections that came after it was fitted, and how many were right. */
  live: { judged: number; right: number; accuracy: number | null };
}

export class Feedback {
  readonly corrections: Corrections;
  readonly refits: Refits;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: FeedbackOptions) {
    let sha: Promise<string> | undefined;
    const model = () => (sha ??= options.model());
    this.refits = new Refits({ ...options, model });
    this.corrections = new Corrections(options.store, {
      retentionMs: options.retentionDays * DAY_MS,
      keepTexts: options.texts !== 'hash',
      onCorrection: (told) => {
        options.metrics?.corrected(told.example.sig.definition.capability);
        this.refits.corrected(told);
      },
    });
    const forget = () =>
      options.store
        .forgetDecisions(new Date(Date.now() - options.retentionDays * DAY_MS).toISOString())
        .catch((err: unknown) => options.log?.error('kept decisions not forgotten yet', { error: String(err) }));
    void forget();
    this.timer = setInterval(forget, FORGET_EVERY_MS);
    this.timer.unref();
  }

  /**
   * A reply's decisions as the store is to keep them: as they are, or (texts: 'hash') without their
   * texts, each read now in the background while its text is in memory.
   */
  keep(drafts: DecisionDraft[]): DecisionDraft[] {
    if (this.options.texts !== 'hash') return drafts;
    return drafts.map((d) => {
      const answer = JSON.parse(d.answer) as Record<string, unknown>;
      const example = readKeptLine({ ...(JSON.parse(d.line) as Record<string, unknown>), expect: answer });
      this.refits.decided(d.id, example, d.head === '' ? answer : undefined);
      return { ...d, line: withoutText(d.line) };
    });
  }

  /** The heads that decide `organization`'s requests (every head when undefined), with live figures. */
  async heads(organization?: string): Promise<HeadListing[]> {
    const heads = this.options.heads?.list(organization) ?? [];
    return Promise.all(
      heads.map(async (h) => {
        const { right, judged } = await this.options.store.headAccuracy(h.id, h.createdAt);
        const accuracy = judged === 0 ? null : right / judged;
        if (accuracy !== null) this.options.metrics?.headAccurate(h.id, accuracy);
        return {
          id: h.id,
          capability: h.capability,
          organization: h.organization || null,
          examples: h.examples,
          fitted_at: h.createdAt,
          live: { judged, right, accuracy },
        };
      }),
    );
  }

  /** Stops forgetting and refitting; a refit in progress stops at its next job, leaving the previous head. */
  close(): void {
    clearInterval(this.timer);
    this.refits.close();
  }
}
