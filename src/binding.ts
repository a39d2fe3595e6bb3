// The whole native surface, typed in one place from what native/addon/ really takes and returns.
// Everything else talks to this file, never to the .node module directly. The addon has no
// defaults: every setting is passed from here. Argument mistakes throw a TypeError naming the
// argument; async work rejects with a NativeError whose `code` is one of NativeErrorCode.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The `code` of every error the addon throws or rejects with (besides argument TypeErrors). */
export type NativeErrorCode =
  | 'cancelled' // the job was cancelled (cancel(id), or close())
  | 'runner_error' // inference failed; worth one retry
  | 'invalid_audio' // the audio cannot be decoded (the client's input)
  | 'audio_too_long' // the audio is longer than maxSeconds
  | 'load_failed' // a model file could not be loaded
  | 'not_loaded' // a call that needs load() to have finished
  | 'encoder_error' // the sentence encoder failed
  | 'closed'; // work sent to a closed encoder

export interface NativeError extends Error {
  code: NativeErrorCode;
}

/** Whether `err` came from the addon with `code`. */
export function isNativeError(err: unknown, ...codes: NativeErrorCode[]): err is NativeError {
  return err instanceof Error && codes.includes((err as NativeError).code);
}

/** The least severe line of llama.cpp's, ggml's and whisper.cpp's log that is printed, as a JSON line on stderr. */
export type NativeLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LoadOptions {
  modelPath: string;
  slots: number; // native threads, each with its own llama context
  backgroundSlots?: number; // one-thread slots at a background priority, for jobs marked background (default 0)
  threads: number; // CPU threads per slot
  contextSize: number; // KV cache tokens per slot
  batchSize: number; // tokens per llama_decode
  sequences: number; // branches decoded side by side per slot (>= 3)
  promptCacheMiB: number; // host memory for the KV of prompts the slots moved away from; 0: none
  borrowTexts: boolean; // a text read under other instructions is borrowed from that prompt's KV
}

export interface WhisperOptions {
  modelPath: string;
  heads: string; // alignment-head preset for word timestamps ("base", "tiny.en"...), "" for none
  vadPath: string; // voice activity model, "" for none
}

export interface EncoderOptions {
  modelPath: string;
  threads: number; // CPU threads
  batchTokens: number; // tokens per encode call; also caps the tokens read of one text
  sequences: number; // texts encoded together in one call
}

export interface ModelInfo {
  description: string;
  sizeBytes: number;
  parameters: number;
  trainContext: number;
  vocabSize: number;
  chatTemplate: string | null;
}

/** Score every option after every branch of a shared prefix (see native/core/jobs.h). */
export interface ScoreJob {
  prefix: Int32Array;
  branches: Int32Array[];
  options: Int32Array[];
  /**
   * Return hidden states at each branch's last token (ScoreResult.hidden): by default the final
   * layer's, after the output norm. Absent or false: the job costs what it did without the feature.
   */
  hidden?: boolean;
  /**
   * With `hidden`, which states, in this order (default [-1]): a layer index 0..layerCount()-1 for
   * the residual stream after that layer, -1 for the final state after the output norm. Distinct,
   * non-empty; each costs the decodes one more pause of the graph.
   */
  hiddenLayers?: number[];
}

/**
 * Copy spans of `source` after every branch (see native/core/jobs.h): greedy decoding restricted to
 * tokens that start or continue a run of source tokens, `separator` between spans (list mode) or
 * a stop token. `none` is the first token of the "nothing fits" answer, scored at the first step.
 * An optional field left out switches its feature off; the engine fills maxSpanTokens and
 * maxSpans from SPAN_DEFAULTS.
 */
export interface SpanJob {
  prefix: Int32Array;
  branches: Int32Array[];
  source: Int32Array;
  /**
   * Other forms a span may begin with (the word without its space, capitalised...): form k is the
   * next startLengths[k] tokens of startTokens and stands for source tokens startPositions[k] to
   * startEnds[k] (absent: to startPositions[k]).
   */
  startTokens?: Int32Array;
  startLengths?: Int32Array;
  startPositions?: Int32Array;
  startEnds?: Int32Array;
  stops: Int32Array;
  separator?: number;
  /** Also between spans of a list, where the model writes the list on one line (","). */
  inlineSeparator?: number;
  none?: number;
  maxSpanTokens?: number;
  maxSpans?: number;
  /** Per branch, in place of maxSpans and maxSpanTokens: single values and lists in one job. */
  branchMaxSpans?: Int32Array;
  branchMaxSpanTokens?: Int32Array;
  /** Per branch x source token (row-major): 1 where that branch's spans may begin (absent: anywhere). */
  branchStarts?: Int32Array;
  /** A later span of a list whose log-probability is below this ends the list. */
  minListLogprob?: number;
  /**
   * One flag per source token: 1 where a span that would end there takes the next token too, if
   * the model gives it at least minJoinLogprob.
   */
  joinNext?: Int32Array;
  minJoinLogprob?: number;
  /** Per source token: the one token that writes it and then the separator ("%\n"), or -1. */
  closingTokens?: Int32Array;
  /**
   * A first token of a branch's first span at most this many nats behind the best is decoded too;
   * its span replaces the greedy one when likelier both whole and per token. Absent or 0: greedy.
   */
  forkWithin?: number;
  /** Single tokens scored at every branch's first answer step (SpanResult.firstLogprobs). */
  firstOptions?: Int32Array;
  /** The last this many branches (up to all) only score firstOptions: a check asked on the same prefill, no span. */
  scoredBranches?: number;
}

interface JobStats {
  promptTokens: number; // prefix + branch tokens: what the model read
  cachedTokens: number; // prefix tokens reused from the slot's cache
  decodeMs: number;
}

export interface ScoreResult extends JobStats {
  /** branches x options, row-major: log P(option | prefix + branch). */
  logprobs: Float32Array;
  /**
   * branches x (hiddenLayers x hiddenSize()), row-major: per branch, the rows of the layers asked in
   * their order (by default the one the logits were read from); only when the job asked.
   */
  hidden?: Float32Array;
}

export interface TokenSpan {
  start: number; // source token index
  end: number; // exclusive
  logprob: number; // the span's tokens and its closing token
  firstLogprob: number; // its first token
  closeLogprob: number; // its closing token: the separator before the next span, or a stop
  stopLogprob: number; // the likeliest stop token at that same step
}

export interface SpanResult extends JobStats {
  spans: TokenSpan[][]; // per branch
  noneLogprobs: Float32Array; // per branch: log P(first token of the "nothing fits" answer)
  firstLogprobs: Float32Array; // branches x firstOptions, row-major
}

type SpanLimits = Required<Pick<SpanJob, 'maxSpanTokens' | 'maxSpans'>>;

/** What a span job copies when the caller does not say: one span of at most 32 tokens. */
export const SPAN_DEFAULTS: Readonly<SpanLimits> = Object.freeze({ maxSpanTokens: 32, maxSpans: 1 });

/** A job as the addon takes it: a span job's limits are always given. */
/** `background`: for a background slot (LoadOptions.backgroundSlots), never a request's. */
export type NativeJob = (({ kind: 'score' } & ScoreJob) | ({ kind: 'spans' } & SpanJob & SpanLimits)) & {
  background?: boolean;
};

/** Decode an audio file and transcribe it with whisper.cpp on a slot (see native/core/transcribe.h). */
export interface TranscribeJob {
  audio: Uint8Array; // the file's bytes; copied at submit
  maxSeconds: number; // longer audio is refused with code "audio_too_long"
  language: string; // whisper language code, or "auto"
  wantPcm?: boolean; // return the decoded 16 kHz mono samples
}

export interface TranscribedToken {
  text: string; // a leading space starts a new word
  start: number; // seconds, whisper's timestamp-token estimate
  end: number;
  aligned: number; // seconds, cross-attention (DTW) alignment; -1 when not computed
  p: number;
}

export interface TranscribedSegment {
  start: number;
  end: number;
  noSpeech: number;
  tokens: TranscribedToken[];
}

export interface TranscribeResult extends JobStats {
  samples: number; // decoded 16 kHz mono samples
  format: string; // demuxer, e.g. "mp3"
  codec: string; // decoder, e.g. "opus"
  segments: TranscribedSegment[];
  energy: Float32Array; // RMS of every 10 ms frame
  pcm?: Float32Array; // with wantPcm
}

export interface PoolStats {
  slots: number; // request slots
  running: number;
  queued: number;
  backgroundRunning: number; // jobs on a background slot now
  backgroundQueued: number;
  completed: number;
  failed: number;
  cancelled: number;
  rejected: number; // transcriptions refused for their input (invalid_audio, audio_too_long)
  promptCacheBytes: number; // KV kept in the shared prompt cache now
  promptCachePrompts: number; // prompts kept there now
  promptCacheLoads: number; // prompts loaded back from it since start
  promptCacheTokens: number; // prompt tokens those loads spared a prefill
  promptCacheBorrows: number; // prompts whose text came from another prompt's KV since start
  promptCacheBorrowedTokens: number; // the tokens of those texts
}

export interface ChatMessage {
  role: string;
  content: string;
}

/**
 * One model behind a pool of slots (native/addon/engine.h). Jobs reject with code 'cancelled' (job
 * aborted or engine closed) or 'runner_error'; transcriptions also with 'invalid_audio' or
 * 'audio_too_long'; loads with 'load_failed'. Synchronous calls before load() resolved throw 'not_loaded'.
 */
export interface NativeEngine {
  /** Once per engine. */
  load(options: LoadOptions): Promise<void>;
  info(): ModelInfo;
  /** The model's n_embd: the length of a score job's hidden state row (ScoreJob.hidden). */
  hiddenSize(): number;
  /** The model's n_layer: a score job's hiddenLayers are -1 or 0..layerCount()-1. */
  layerCount(): number;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  applyTemplate(messages: ChatMessage[], addAssistant: boolean): string;
  submit(job: NativeJob): { id: number; result: Promise<ScoreResult | SpanResult> };
  /** A whisper.cpp ggml model for transcription jobs, once, after load(). Absent in test fakes. */
  loadWhisper?(options: WhisperOptions): Promise<void>;
  /** A transcription job on the slots; bad audio rejects with code "invalid_audio" or "audio_too_long". */
  transcribe?(job: TranscribeJob): { id: number; result: Promise<TranscribeResult> };
  /** UTF-8 byte length of each token's text. */
  tokenBytes(tokens: Int32Array): Int32Array;
  /** End-of-generation and end-of-turn token ids (-1 when absent). */
  specialTokens(): { eos: number; eot: number };
  cancel(id: number): void;
  stats(): PoolStats;
  close(): void;
}

/**
 * A sentence encoder on its own native thread (native/core/sentence_encoder.h). Rejects with code
 * 'encoder_error' when the model fails, 'closed' after close().
 */
export interface NativeEncoder {
  /** Once per encoder. */
  load(options: EncoderOptions): Promise<{ dimensions: number; windowTokens: number }>;
  /** One unit-length vector per text, rows of `dimensions` floats; a text is cut to windowTokens. */
  embed(texts: string[]): Promise<Float32Array>;
  /** The task in hand finishes; queued ones reject with code 'closed'. */
  close(): void;
}

/** The CAM++ speaker encoder (native/core/campplus.h), on its own native thread; calls run one after another. */
export interface NativeSpeakerEncoder {
  readonly dims: {
    mels: number;
    embedding: number;
    partialFrames: number;
    maxPartialFrames: number;
  };
  /**
   * Embeddings of partials of 16 kHz mono `pcm`: partial i is fbank frames (10 ms each)
   * [starts[i], starts[i] + lengths[i]). Resolves count x embedding floats, row-major, each row
   * L2-normalised. `gain` scales the audio first (see loudnessGain in src/audio/diarize.ts).
   * Reads `pcm` in place: do not change it until the promise settles. Rejects with code 'runner_error'.
   */
  embed(pcm: Float32Array, starts: Int32Array, lengths: Int32Array, gain: number): Promise<Float32Array>;
}

export interface NativeBinding {
  Engine: new () => NativeEngine;
  Encoder: new () => NativeEncoder;
  /** Absent only in test fakes. `weights`: a DMSPKCAM file's bytes; a bad file throws 'load_failed'. */
  SpeakerEncoder?: new (weights: Uint8Array) => NativeSpeakerEncoder;
  /**
   * Writes `output`: GGUF `input` rewritten by llama.cpp's quantizer in `mixture`, except tensors whose
   * name matches a key of `tensors` (a regular expression), which take its type. Deterministic.
   */
  requantize(options: {
    input: string;
    output: string;
    mixture: 'q4_k_m';
    tensors: Readonly<Record<string, 'q4_k'>>;
  }): Promise<void>;
  versions(): { whisper: string; system: string };
  setLogLevel(level: NativeLogLevel): void;
}

const addonPath = fileURLToPath(new URL('../../build/Release/decision_machine.node', import.meta.url));

let cached: NativeBinding | undefined;

/**
 * Loads the addon once; a clear error if it was never built. `logLevel`, when given, sets the
 * native libraries' log threshold (at first load: errors only unless given).
 */
export function loadBinding(logLevel?: NativeLogLevel): NativeBinding {
  if (!cached) {
    if (!existsSync(addonPath)) {
      throw new Error(`native addon not built (${addonPath} is missing): run \`npm install\` or \`npm run build\``);
    }
    cached = createRequire(import.meta.url)(addonPath) as NativeBinding;
    cached.setLogLevel(logLevel ?? 'error');
  } else if (logLevel) {
    cached.setLogLevel(logLevel);
  }
  return cached;
}
