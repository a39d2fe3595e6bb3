// The engine: one loaded model behind a fixed pool of native slots, with explicit admission.
// Usable without the HTTP server (see src/index.ts).
import { loadBinding, type NativeBinding, type NativeEncoder, type NativeEngine } from '../binding.js';
import type { ChatMessage, ModelInfo, NativeLogLevel, NativeSpeakerEncoder } from '../binding.js';
import { readFile } from 'node:fs/promises';
import { DEFAULTS } from '../config.js';
import { Admissions } from './admissions.js';
import { openSession, TokenBudget, type ClosableSession, type SessionHost } from './session.js';

export type { ClosableSession, Session, SpeakerEmbedder } from './session.js';

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
/** A request reads at most this many slot contexts of tokens in all its jobs (see TokenBudget). */
export const REQUEST_CONTEXTS = 2;

/** The request a session is admitted for (Engine.admit). */
export interface AdmittedRequest {
  /** Aborted when the client goes away or the deadline passes: cancels the request's jobs. */
  signal?: AbortSignal;
  /** Whose heads decide it ('' for none, or keys off). */
  organization?: string;
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
  private transcribes = false;
  private speakerEncoder: NativeSpeakerEncoder | undefined;
  private readonly admissions: Admissions;
  private readonly backgroundSlots: number;
  private readonly host: SessionHost;

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
    this.admissions = new Admissions(this.capacity);
    this.contextSize = options.contextSize;
    this.requestTokens = REQUEST_CONTEXTS * options.contextSize;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    this.backgroundSlots = options.backgroundSlots ?? 1;
    const { eos, eot } = native.specialTokens();
    this.stopTokens = Int32Array.from(new Set([eos, eot].filter((t) => t >= 0)));
    this.host = {
      native,
      contextSize: this.contextSize,
      encoder,
      speakers: () => this.speakerEncoder,
      slotWait: () => {},
    };
  }

  /** Told the seconds each job waited for a slot (its time to result less its time on the slot). */
  set onSlotWait(observe: (seconds: number) => void) {
    this.host.slotWait = observe;
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

  /** Text to tokens. `special` parses template markers; user text never sets it. */
  tokenize(text: string, special = false, addBos = false): Int32Array {
    return this.native.tokenize(text, addBos, special);
  }

  /** Renders messages with the model's own chat template. */
  chat(messages: ChatMessage[], addAssistant: boolean): string {
    return this.native.applyTemplate(messages, addAssistant);
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

  /**
   * Admits one request and returns its Session, through which everything the request does on the
   * models runs; the caller closes it once the work is done or has thrown (`try { ... } finally {
   * session.close() }`). When `capacity` requests are already admitted this throws `overloaded` at
   * once (`shutting_down` after close()); an admitted request is never refused for capacity again,
   * so it is answered. `close()` waits for it until its session is closed. Aborting `signal`
   * cancels every job of the session.
   */
  admit(request: AdmittedRequest = {}): ClosableSession {
    this.admissions.take();
    const { signal, organization = '' } = request;
    const admissions = this.admissions;
    return openSession(this.host, { signal, organization, background: false, budget: this.budget(), admissions });
  }

  /**
   * A Session whose work runs on the background slots: never a request slot, never refused, not
   * counted as a request nor held to a request's token budget; its opener closes it as an admitted
   * one. With no background slots it shares the request slots and is budgeted as a request.
   * `close()` cancels what it has queued.
   */
  background(): ClosableSession {
    const background = this.backgroundSlots > 0;
    return openSession(this.host, { organization: '', background, budget: this.budget() });
  }

  /** Throws `overloaded` when a new request would not be admitted now. */
  assertAdmissible(): void {
    this.admissions.check();
  }

  private budget(): TokenBudget {
    return new TokenBudget(this.requestTokens);
  }

  stats(): EngineStats {
    const { count: inflight, refused } = this.admissions;
    return { ...this.native.stats(), capacity: this.capacity, inflight, refused };
  }

  /** Refuses new requests, waits for admitted ones to finish, then frees the model. */
  async close(): Promise<void> {
    await this.admissions.close();
    this.native.close();
    this.encoder?.native.close();
    this.speakerEncoder = undefined;
  }
}
