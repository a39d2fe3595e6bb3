// The engine: one loaded model behind a fixed pool of native slots, with explicit admission.
// Usable without the HTTP server (see src/index.ts).
import {
  isNativeError,
  loadBinding,
  SPAN_DEFAULTS,
  type NativeBinding,
  type NativeEncoder,
  type NativeEngine,
  type NativeJob,
  type NativeLogLevel,
  type ScoreJob,
  type ScoreResult,
} from '../binding.js';
import type { SpanJob, SpanResult } from '../binding.js';
import type { ChatMessage, ModelInfo } from '../binding.js';
import type { NativeSpeakerEncoder, TranscribeJob, TranscribeResult } from '../binding.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFile } from 'node:fs/promises';
import { ERRORS, CancelledError } from '../errors.js';
import { DEFAULTS } from '../config.js';

export interface EngineOptions {
  modelPath: string;
  slots: number;
  threads: number;
  /** Requests allowed to wait for a slot; beyond slots + queue a request is refused at once. */
  queue: number;
  contextSize: number;
  batchSize: number;
  /**
   * Host memory (MiB) that keeps the KV of prompts the slots moved away from, so that a capability
   * asked again after others skips its instructions' prefill; 0: none.
   */
  promptCacheMiB: number;
  /**
   * 'on': a text that a prompt kept in that memory already read under another capability's
   * instructions is taken from its KV, moved into place, instead of prefilled again. An
   * approximation (docs/performance.md). Needs promptCacheMiB > 0; default 'off'.
   */
  textReuse?: 'on' | 'off';
  /** A sentence encoder GGUF; without one, long texts are read whole (see src/decisions/windows.ts). */
  encoderPath?: string;
  /** llama.cpp's and whisper.cpp's own log threshold (JSON lines on stderr); errors only when unset. */
  nativeLog?: NativeLogLevel;
  /** The longest one HTTP request may run, ms (src/http/deadline.ts); DEFAULTS.requestTimeoutMs when unset. */
  requestTimeoutMs?: number;
  /**
   * Slots for background work (`Engine.background`: heads refitted beside requests), one thread
   * each at a background CPU priority (nice 14); default 1. With 0, background work shares the request slots.
   */
  backgroundSlots?: number;
}

export interface EngineStats {
  slots: number;
  capacity: number; // slots + queue: requests admitted at once
  inflight: number; // admitted requests not yet answered
  running: number; // jobs on a request slot now
  queued: number; // jobs waiting for a request slot
  backgroundRunning: number; // background jobs on a background slot now
  backgroundQueued: number;
  completed: number;
  failed: number;
  cancelled: number;
  refused: number; // requests refused with 529
  promptCacheBytes: number; // the shared prompt cache (EngineOptions.promptCacheMiB) now
  promptCachePrompts: number;
  promptCacheLoads: number; // since start
  promptCacheTokens: number; // prompt tokens not prefilled thanks to those loads
  promptCacheBorrows: number; // prompts that took their text's KV from another capability's prompt
  promptCacheBorrowedTokens: number;
}

// Sequences per slot: the shared prefix plus one per statement of a full list (32), so a full
// list is scored in one decode. Each costs a logits row (0.6 MB with a 150k vocabulary).
const SEQUENCES = 33;
// The sentence encoder reads up to 512 tokens of a window (its trained context) and encodes four
// windows per call.
const ENCODER = Object.freeze({ batchTokens: 512, sequences: 4 });
const ATTEMPTS = 2; // an inference failure is retried once; the second failure is final
/** A request reads at most this many slot contexts of tokens in all its jobs (see tokensOf). */
export const REQUEST_CONTEXTS = 2;

/** What diarization uses of the speaker encoder: its sizes and batched window embeddings. */
export type SpeakerEmbedder = Pick<NativeSpeakerEncoder, 'dims' | 'embed'>;

/** What a session body runs its rounds with: everything one request does on the model. */
export interface Session {
  score(jobs: ScoreJob[]): Promise<ScoreResult[]>;
  spans(jobs: SpanJob[]): Promise<SpanResult[]>;
  /** Decodes and transcribes one audio file on a slot; bad audio is a 400 (413 when too long), not retried. */
  transcribe(job: TranscribeJob): Promise<TranscribeResult>;
  /** The speaker encoder (see loadSpeakerEncoder), for diarization inside the request. */
  readonly speakers: SpeakerEmbedder;
}

export class Engine {
  readonly info: ModelInfo;
  /** The length of a score result's hidden state row (ScoreJob.hidden): the model's n_embd. */
  readonly hiddenSize: number;
  /** The model's layers (ScoreJob.hiddenLayers: -1 or 0..layerCount-1). */
  readonly layerCount: number;
  /** Versions of the native libraries in the addon (whisper.cpp) and the CPU features in use. */
  readonly versions: { whisper: string; system: string };
  readonly capacity: number;
  readonly contextSize: number;
  /** The most tokens one request may have the model read: its time bound (docs/operations.md). */
  readonly requestTokens: number;
  /** Tokens that end the model's reply. */
  readonly stopTokens: Int32Array;
  /** The ceiling of a request's deadline, ms (src/http/deadline.ts). */
  readonly requestTimeoutMs: number;
  /** Called with the seconds each job waited for a slot (its time to result less its time on the slot). */
  onSlotWait: ((seconds: number) => void) | undefined;
  private inflight = 0;
  private transcribes = false;
  private speakerEncoder: NativeSpeakerEncoder | undefined;
  private refused = 0;
  private closed = false;
  private drained: (() => void) | undefined;
  /**
   * Set inside an admitted request (its further sessions, label priors and windows, are part of
   * it) and inside background work.
   */
  private readonly admission = new AsyncLocalStorage<Admission>();
  private readonly backgroundSlots: number;

  private constructor(
    private readonly native: NativeEngine,
    options: EngineOptions,
    private readonly binding: NativeBinding,
    private readonly encoder: { native: NativeEncoder; dimensions: number } | undefined,
  ) {
    this.info = native.info();
    this.hiddenSize = native.hiddenSize();
    this.layerCount = native.layerCount();
    this.versions = binding.versions();
    this.capacity = options.slots + options.queue;
    this.contextSize = options.contextSize;
    this.requestTokens = REQUEST_CONTEXTS * options.contextSize;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    this.backgroundSlots = options.backgroundSlots ?? 1;
    const { eos, eot } = native.specialTokens();
    this.stopTokens = Int32Array.from(new Set([eos, eot].filter((t) => t >= 0)));
  }

  /** Loads the model and creates the slots off the main thread. */
  static async open(options: EngineOptions, binding: NativeBinding = loadBinding(options.nativeLog)): Promise<Engine> {
    const native = new binding.Engine();
    const encoder = options.encoderPath === undefined ? undefined : new binding.Encoder();
    const { modelPath, slots, threads, contextSize, batchSize, promptCacheMiB, textReuse } = options;
    const [, shape] = await Promise.all([
      native.load({
        modelPath,
        slots,
        backgroundSlots: options.backgroundSlots ?? 1,
        threads,
        contextSize,
        batchSize,
        sequences: SEQUENCES,
        promptCacheMiB,
        borrowTexts: textReuse === 'on',
      }),
      encoder?.load({ modelPath: options.encoderPath!, threads, ...ENCODER }),
    ]);
    return new Engine(native, options, binding, encoder && { native: encoder, dimensions: shape!.dimensions });
  }

  /** Whether long texts can be windowed: a sentence encoder is loaded. */
  get canEmbed(): boolean {
    return this.encoder !== undefined;
  }

  /** Unit vectors for `texts` from the sentence encoder, one per text; admitted like a request. */
  embed(texts: string[]): Promise<Float32Array[]> {
    const encoder = this.encoder;
    if (!encoder) throw new Error('no sentence encoder is loaded');
    return this.admitted(async () => {
      const rows = await encoder.native.embed(texts);
      return texts.map((_, i) => rows.subarray(i * encoder.dimensions, (i + 1) * encoder.dimensions));
    });
  }

  /** Text to tokens. `special` parses template markers; user text never sets it. */
  tokenize(text: string, special = false, addBos = false): Int32Array {
    return this.native.tokenize(text, addBos, special);
  }

  /** Renders messages with the model's own chat template. */
  chat(messages: ChatMessage[], addAssistant: boolean): string {
    return this.native.applyTemplate(messages, addAssistant);
  }

  /** Runs the scoring jobs of one request: a session with a single round. */
  score(jobs: ScoreJob[], signal?: AbortSignal): Promise<ScoreResult[]> {
    return this.session((run) => run.score(jobs), signal);
  }

  /** Runs the span jobs of one request: a session with a single round. */
  spans(jobs: SpanJob[], signal?: AbortSignal): Promise<SpanResult[]> {
    return this.session((run) => run.spans(jobs), signal);
  }

  /** UTF-8 byte length of each token's text. */
  tokenBytes(tokens: Int32Array): Int32Array {
    return this.native.tokenBytes(tokens);
  }

  /**
   * Loads a whisper.cpp model into the same slots; `heads` is its alignment-head preset. With
   * `vadPath`, audio without speech is not transcribed.
   */
  async loadWhisper(modelPath: string, heads: string, vadPath?: string): Promise<void> {
    if (!this.native.loadWhisper) throw new Error('this binding cannot transcribe');
    await this.native.loadWhisper({ modelPath, heads, vadPath: vadPath ?? '' });
    this.transcribes = true;
  }

  /** Whether a whisper model is loaded. */
  get canTranscribe(): boolean {
    return this.transcribes;
  }

  /** Loads the speaker encoder diarization runs on (a DMSPKCAM file, see src/models/converters/campplus.ts). */
  async loadSpeakerEncoder(path: string): Promise<void> {
    if (!this.binding.SpeakerEncoder) throw new Error('this addon build has no speaker encoder');
    this.speakerEncoder = new this.binding.SpeakerEncoder(await readFile(path));
  }

  /** Transcribes one audio file: a session with a single round (see Session.transcribe). */
  transcribe(job: TranscribeJob, signal?: AbortSignal): Promise<TranscribeResult> {
    return this.session((run) => run.transcribe(job), signal);
  }

  /**
   * Admits one request for everything `body` starts: sessions, a label set's prior, the windows
   * of a long text. When `capacity` requests are already admitted this throws `overloaded` at
   * once; inside an admitted request it never does, so an admitted request is answered.
   */
  async admitted<T>(body: () => Promise<T>, organization = ''): Promise<T> {
    if (this.admission.getStore()) return body();
    this.assertAdmissible();
    this.inflight++;
    try {
      return await this.admission.run({ tokens: 0, organization, background: false }, body);
    } finally {
      if (--this.inflight === 0) this.drained?.();
    }
  }

  /**
   * Runs `body`'s work on the background slots: never a request slot, never refused, not counted
   * as a request nor held to a request's token budget. `close()` cancels what it has queued.
   */
  background<T>(body: () => Promise<T>): Promise<T> {
    return this.admission.run({ tokens: 0, organization: '', background: true }, body);
  }

  /**
   * Hands `body` a `Session` for everything one request does on the models (classify-tree
   * needs one round per level; a diarized transcription transcribes, then embeds speakers),
   * admitted as above, so `close()` waits for all of it. Jobs of a round run in parallel across
   * slots; each failing job is retried once. Aborting `signal` cancels every job and frees their slots.
   */
  session<T>(body: (run: Session) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.admitted(async () => {
      const running = new Set<number>();
      const cancelAll = () => running.forEach((id) => this.native.cancel(id));
      signal?.addEventListener('abort', cancelAll, { once: true });
      // Async, so a refusal (cancelled, too long, over the budget) is a rejected promise, never a
      // throw: a body that starts a second round after a first cannot leave the first's promise
      // unhandled when the second is refused and the session cancels the first.
      const round = async <R>(jobs: NativeJob[]): Promise<R[]> => {
        if (signal?.aborted) throw new CancelledError();
        for (const job of jobs) this.checkFits(job);
        const background = this.admission.getStore()!.background && this.backgroundSlots > 0;
        if (!background) this.charge(jobs);
        return Promise.all(
          jobs.map((job) =>
            this.retried(
              () => this.native.submit(background ? { ...job, background } : job) as { id: number; result: Promise<R> },
              running,
              signal,
            ),
          ),
        );
      };
      const speakers = this.speakerEncoder;
      const run: Session = {
        score: (jobs) => round<ScoreResult>(jobs.map((j) => ({ kind: 'score', ...j }))),
        spans: (jobs) =>
          round<SpanResult>(
            jobs.map((j) => ({
              kind: 'spans',
              ...j,
              maxSpanTokens: j.maxSpanTokens ?? SPAN_DEFAULTS.maxSpanTokens,
              maxSpans: j.maxSpans ?? SPAN_DEFAULTS.maxSpans,
            })),
          ),
        transcribe: (job) => {
          if (!this.native.transcribe) throw new Error('this binding cannot transcribe');
          return this.retried(() => this.native.transcribe!(job), running, signal);
        },
        get speakers(): SpeakerEmbedder {
          if (!speakers) throw new Error('no speaker encoder is loaded');
          return speakers;
        },
      };
      try {
        return await body(run);
      } catch (err) {
        cancelAll(); // one job failed for good: the others are wasted work
        throw err;
      } finally {
        signal?.removeEventListener('abort', cancelAll);
      }
    });
  }

  /** The organization whose request is running here ('' for none, or keys off): whose heads apply. */
  get organization(): string {
    return this.admission.getStore()?.organization ?? '';
  }

  /** Throws `overloaded` when a new request would not be admitted now (never inside an admitted one). */
  assertAdmissible(): void {
    if (this.admission.getStore()) return;
    if (this.closed) throw ERRORS.shuttingDown();
    if (this.inflight >= this.capacity) {
      this.refused++;
      throw ERRORS.overloaded();
    }
  }

  /**
   * Runs one native job, retrying a failure once (runner_error after the second). Cancellation
   * and the audio errors (bad audio 400, too long 413) are final; `running` holds the job's id
   * while it runs, so the session can cancel it.
   */
  private async retried<R>(
    start: () => { id: number; result: Promise<R> },
    running: Set<number>,
    signal?: AbortSignal,
  ): Promise<R> {
    let last = '';
    for (let i = 0; i < ATTEMPTS; i++) {
      if (signal?.aborted) throw new CancelledError();
      const submitted = performance.now();
      const { id, result } = start();
      running.add(id);
      try {
        const done = await result;
        const onSlot = (done as { decodeMs?: number }).decodeMs ?? 0;
        this.onSlotWait?.(Math.max(0, performance.now() - submitted - onSlot) / 1000);
        return done;
      } catch (err) {
        if (isNativeError(err, 'cancelled') || signal?.aborted) throw new CancelledError();
        if (isNativeError(err, 'invalid_audio')) throw ERRORS.invalidRequest(`body: ${err.message}`);
        if (isNativeError(err, 'audio_too_long')) throw ERRORS.audioTooLong(`body: ${err.message}`);
        last = (err as Error).message;
      } finally {
        running.delete(id);
      }
    }
    throw ERRORS.inferenceFailed(last);
  }

  // A job's branches live in the KV cache together with its prefix; it must fit in one slot. A
  // span job runs its branches in groups that fit (span_kernel.cpp): one branch with the longest
  // answer it may copy must fit alone.
  private checkFits(job: NativeJob): void {
    let need = job.prefix.length;
    if (job.kind === 'score') {
      for (const b of job.branches) need += b.length;
      for (const o of job.options) need += job.branches.length * (o.length - 1);
    } else {
      need += Math.max(...job.branches.map((b, i) => b.length + longestAnswer(job, i)));
    }
    if (need > this.contextSize) {
      throw ERRORS.invalidRequest(
        `body: the request needs ${need} tokens of context but a slot holds ${this.contextSize}; send shorter texts or fewer statements`,
      );
    }
  }

  // Counted before any of the round's jobs start: a request over its budget is refused with a
  // 400 naming the limit instead of holding slots for minutes.
  private charge(jobs: NativeJob[]): void {
    const request = this.admission.getStore()!;
    request.tokens += tokensOf(jobs);
    if (request.tokens > this.requestTokens) {
      throw ERRORS.invalidRequest(
        `body: the request needs ${request.tokens} tokens of model reading, more than the limit of ${this.requestTokens} per request; send fewer or shorter texts, statements, labels or fields, or split the request`,
      );
    }
  }

  stats(): EngineStats {
    return { ...this.native.stats(), capacity: this.capacity, inflight: this.inflight, refused: this.refused };
  }

  /** Refuses new requests, waits for admitted ones to finish, then frees the model. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.native.close();
    this.encoder?.native.close();
    this.speakerEncoder = undefined;
  }
}

/** What the engine knows of the work running in a context: a request's, or background work. */
interface Admission {
  /** Tokens the request has had the model read (its budget: requestTokens). */
  tokens: number;
  organization: string;
  background: boolean;
}

type SpansJob = NativeJob & { kind: 'spans' };

/** The most tokens one span of branch i may take (its own limit, or the job's). */
function spanTokensOf(job: SpansJob, i: number): number {
  return job.branchMaxSpanTokens?.[i] ?? job.maxSpanTokens;
}

/** The most tokens branch i of a span job may write: its spans, each closed by one token. */
function longestAnswer(job: SpansJob, i: number): number {
  return (job.branchMaxSpans?.[i] ?? job.maxSpans) * (spanTokensOf(job, i) + 1);
}

/**
 * The tokens a round has the model read: each job's prefix past what it shares with the first
 * (a slot keeps a common system prompt cached), its branches, every option of a score job after
 * each branch, and one span answer per branch of a span job. Linear in the jobs' sizes.
 */
export function tokensOf(jobs: NativeJob[]): number {
  const first = jobs[0]?.prefix;
  let tokens = 0;
  for (const job of jobs) {
    let shared = 0;
    if (job !== jobs[0])
      while (shared < job.prefix.length && shared < first!.length && job.prefix[shared] === first![shared]) shared++;
    tokens += job.prefix.length - shared;
    for (const b of job.branches) tokens += b.length;
    if (job.kind === 'score') for (const o of job.options) tokens += job.branches.length * o.length;
    else job.branches.forEach((_, i) => (tokens += spanTokensOf(job, i) + 1));
  }
  return tokens;
}
