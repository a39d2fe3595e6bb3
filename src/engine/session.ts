// A request's work on the models, passed by hand: Engine.admit admits one request and returns its
// Session; the route (or the library call) gives it to the decision (`run(input, session)`), the
// decision to everything it starts (its rounds, a label set's prior, the windows of a long text, a
// head's reading, a transcription and its speakers), and once the work is done, or has thrown, the
// route closes it. The session holds what the request owns: its signal, its organization, its token
// budget, its place among the admitted requests. Background work has a session of its own
// (Engine.background). Nothing finds a request implicitly, and nothing here calls back into its
// caller: the work runs in the caller's own code, between admit() and close().
import { isNativeError, SPAN_DEFAULTS } from '../binding.js';
import type { NativeEncoder, NativeEngine, NativeJob, NativeSpeakerEncoder } from '../binding.js';
import type { ScoreJob, ScoreResult, SpanJob, SpanResult, TranscribeJob, TranscribeResult } from '../binding.js';
import { ERRORS, CancelledError } from '../errors.js';
import type { Admissions } from './admissions.js';
import { checkFits, tokensOf } from './job-size.js';

const ATTEMPTS = 2; // an inference failure is retried once; the second failure is final

/** What diarization uses of the speaker encoder: its sizes and batched window embeddings. */
export type SpeakerEmbedder = Pick<NativeSpeakerEncoder, 'dims' | 'embed'>;

/** Everything one admitted request (or one piece of background work) does on the models. */
export interface Session {
  /** Aborting it cancels the session's jobs and frees their slots; undefined: never aborted. */
  readonly signal: AbortSignal | undefined;
  /** Whose heads decide the request ('' for none, or keys off). */
  readonly organization: string;
  /** Whether its jobs run on the background slots (Engine.background): not charged to the budget. */
  readonly background: boolean;
  /** The tokens the request may have the model read in all its rounds, and those it has. */
  readonly budget: TokenBudget;
  /**
   * One round: the jobs run in parallel across slots, each failing job retried once (502 after
   * the second failure), and a job failing for good cancels the session's others.
   */
  score(jobs: ScoreJob[]): Promise<ScoreResult[]>;
  spans(jobs: SpanJob[]): Promise<SpanResult[]>;
  /** Decodes and transcribes one audio file on a slot; bad audio is a 400 (413 when too long), not retried. */
  transcribe(job: TranscribeJob): Promise<TranscribeResult>;
  /** Unit vectors from the sentence encoder, one per text; neither aborted nor charged. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** The speaker encoder (Engine.loadSpeakerEncoder), for diarization inside the request. */
  readonly speakers: SpeakerEmbedder;
  /**
   * The same request (its budget and organization) without its signal, its jobs apart: for work
   * other requests may wait for (a label set's prior), which the asker going away must not cancel.
   */
  withoutSignal(): Session;
}

/** A session as Engine.admit and Engine.background return it: its opener's to close. */
export interface ClosableSession extends Session {
  /**
   * Ends the session once its work is done or has thrown: cancels its jobs still running (work
   * that threw may leave some, its other jobs being wasted work; work that returned has none), no
   * longer listens to its signal, and gives back its admission, which lets Engine.close() finish.
   * Later calls do nothing.
   */
  close(): void;
}

/** The tokens one request may have the model read in all its jobs (Engine.requestTokens). */
export class TokenBudget {
  private read = 0;

  constructor(readonly limit: number) {}

  /** Tokens the request has had the model read so far. */
  get spent(): number {
    return this.read;
  }

  /**
   * Counts a round before any of its jobs start: a request over its budget is refused with a 400
   * naming the limit instead of holding slots for minutes.
   */
  charge(jobs: NativeJob[]): void {
    this.read += tokensOf(jobs);
    if (this.read > this.limit) {
      throw ERRORS.invalidRequest(
        `body: the request needs ${this.read} tokens of model reading, more than the limit of ${this.limit} per request; send fewer or shorter texts, statements, labels or fields, or split the request`,
      );
    }
  }
}

/** The engine's parts a session runs on (one per Engine). */
export interface SessionHost {
  readonly native: NativeEngine;
  /** A slot's context in tokens: the most one job may need. */
  readonly contextSize: number;
  readonly encoder: { native: NativeEncoder; dimensions: number } | undefined;
  /** The speaker encoder, once loaded. */
  speakers(): SpeakerEmbedder | undefined;
  /** Told the seconds each job waited for a slot (its time to result less its time on the slot). */
  slotWait: (seconds: number) => void;
}

/** Who a new session works for: see the fields of Session. */
export interface SessionOptions {
  signal?: AbortSignal;
  organization: string;
  background: boolean;
  budget: TokenBudget;
  /** The count the session was admitted into (Engine.admit), given back at close(); none for background work. */
  admissions?: Admissions;
}

/** A new session on `host`, listening to its signal until closed. */
export function openSession(host: SessionHost, options: SessionOptions): ClosableSession {
  return new HostedSession(host, options);
}

class HostedSession implements ClosableSession {
  readonly signal: AbortSignal | undefined;
  readonly organization: string;
  readonly background: boolean;
  readonly budget: TokenBudget;
  private readonly running = new Set<number>();
  private readonly onAbort = () => this.cancel();
  private admissions: Admissions | undefined;
  private closed = false;

  constructor(
    private readonly host: SessionHost,
    options: SessionOptions,
  ) {
    this.signal = options.signal;
    this.organization = options.organization;
    this.background = options.background;
    this.budget = options.budget;
    this.admissions = options.admissions;
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  score(jobs: ScoreJob[]): Promise<ScoreResult[]> {
    return this.round<ScoreResult>(jobs.map((j) => ({ kind: 'score', ...j })));
  }

  spans(jobs: SpanJob[]): Promise<SpanResult[]> {
    return this.round<SpanResult>(
      jobs.map((j) => ({
        kind: 'spans',
        ...j,
        maxSpanTokens: j.maxSpanTokens ?? SPAN_DEFAULTS.maxSpanTokens,
        maxSpans: j.maxSpans ?? SPAN_DEFAULTS.maxSpans,
      })),
    );
  }

  transcribe(job: TranscribeJob): Promise<TranscribeResult> {
    const native = this.host.native;
    if (!native.transcribe) throw new Error('this binding cannot transcribe');
    return this.retried(() => native.transcribe!(job));
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoder = this.host.encoder;
    if (!encoder) throw new Error('no sentence encoder is loaded');
    const rows = await encoder.native.embed(texts);
    return texts.map((_, i) => rows.subarray(i * encoder.dimensions, (i + 1) * encoder.dimensions));
  }

  get speakers(): SpeakerEmbedder {
    const speakers = this.host.speakers();
    if (!speakers) throw new Error('no speaker encoder is loaded');
    return speakers;
  }

  withoutSignal(): Session {
    const { organization, background, budget } = this;
    return new HostedSession(this.host, { organization, background, budget });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancel();
    this.signal?.removeEventListener('abort', this.onAbort);
    this.admissions?.release();
  }

  /** Cancels every job of the session still running. */
  private cancel(): void {
    this.running.forEach((id) => this.host.native.cancel(id));
  }

  // Async, so a refusal (cancelled, too long, over the budget) is a rejected promise, never a
  // throw: a body that starts a second round after a first cannot leave the first's promise
  // unhandled when the second is refused and the session cancels the first.
  private async round<R>(jobs: NativeJob[]): Promise<R[]> {
    if (this.signal?.aborted) throw new CancelledError();
    for (const job of jobs) checkFits(job, this.host.contextSize);
    if (!this.background) this.budget.charge(jobs);
    const submit = (job: NativeJob) => this.host.native.submit(this.background ? { ...job, background: true } : job);
    try {
      return await Promise.all(
        jobs.map((job) => this.retried(() => submit(job) as { id: number; result: Promise<R> })),
      );
    } catch (err) {
      this.cancel();
      throw err;
    }
  }

  /**
   * Runs one native job, retrying a failure once (runner_error after the second). Cancellation
   * and the audio errors (bad audio 400, too long 413) are final; the session holds the job's id
   * while it runs, so it can cancel it.
   */
  private async retried<R>(start: () => { id: number; result: Promise<R> }): Promise<R> {
    let last = '';
    for (let i = 0; i < ATTEMPTS; i++) {
      if (this.signal?.aborted) throw new CancelledError();
      const submitted = performance.now();
      const { id, result } = start();
      this.running.add(id);
      try {
        const done = await result;
        const onSlot = (done as { decodeMs?: number }).decodeMs ?? 0;
        this.host.slotWait(Math.max(0, performance.now() - submitted - onSlot) / 1000);
        return done;
      } catch (err) {
        if (isNativeError(err, 'cancelled') || this.signal?.aborted) throw new CancelledError();
        if (isNativeError(err, 'invalid_audio')) throw ERRORS.invalidRequest(`body: ${err.message}`);
        if (isNativeError(err, 'audio_too_long')) throw ERRORS.audioTooLong(`body: ${err.message}`);
        last = (err as Error).message;
      } finally {
        this.running.delete(id);
      }
    }
    throw ERRORS.inferenceFailed(last);
  }
}
