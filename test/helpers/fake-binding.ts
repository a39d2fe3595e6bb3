// A fake native binding for fast HTTP and engine tests: same typed surface as src/binding.ts,
// no model. Tokens are character codes; a branch's score favours "Yes" when its text contains
// "[true]"; a span job copies the source's first word (or nothing when a branch says "[none]").
// Each job takes `delayMs`; `failures` jobs fail before the rest succeed. The encoder counts letters.
// A score job that asks for hidden states gets, per branch and layer asked (il, unchecked), its
// token codes summed into FAKE_HIDDEN_SIZE buckets, times il + 2. A transcription is two seconds
// of silence heard as "one two three four"; the speaker encoder takes `speakerDelayMs` per call
// and hears one voice.
import type {
  ChatMessage,
  LoadOptions,
  NativeBinding,
  NativeEncoder,
  NativeEngine,
  NativeJob,
  NativeSpeakerEncoder,
  PoolStats,
  ScoreJob,
  ScoreResult,
  SpanJob,
  SpanResult,
  TranscribeJob,
  TranscribeResult,
} from '../../src/binding.js';

/** The fake model's hidden state length. */
export const FAKE_HIDDEN_SIZE = 8;
/** The fake model's layer count. */
export const FAKE_LAYER_COUNT = 4;

export interface FakeBehaviour {
  delayMs: number;
  failures: number; // how many submitted jobs fail (runner_error) before jobs succeed
  speakerDelayMs: number;
}

export interface FakeBinding extends NativeBinding {
  behaviour: FakeBehaviour;
  submitted: number;
  cancelled: number;
  running: () => number;
  /** Speaker encoder calls started. */
  embeddings: number;
}

export function fakeBinding(behaviour: Partial<FakeBehaviour> = {}): FakeBinding {
  const state: FakeBinding = {
    behaviour: { delayMs: 5, failures: 0, speakerDelayMs: 5, ...behaviour },
    submitted: 0,
    cancelled: 0,
    embeddings: 0,
    running: () => running.size,
    versions: () => ({ whisper: 'fake', system: 'fake' }),
    requantize: () => Promise.reject(new Error('the fake binding has no quantizer')),
    setLogLevel: () => {},
    Engine: class implements NativeEngine {
      async load(_options: LoadOptions): Promise<void> {}
      info() {
        return {
          description: 'fake model',
          sizeBytes: 0,
          parameters: 0,
          trainContext: 4096,
          vocabSize: 65536,
          chatTemplate: null,
        };
      }
      hiddenSize(): number {
        return FAKE_HIDDEN_SIZE;
      }
      layerCount(): number {
        return FAKE_LAYER_COUNT;
      }
      tokenize(text: string): Int32Array {
        return Int32Array.from(text, (c) => c.codePointAt(0)! & 0xffff);
      }
      applyTemplate(messages: ChatMessage[], addAssistant: boolean): string {
        return (
          messages.map((m) => `<${m.role}>${m.content}</${m.role}>`).join('') + (addAssistant ? '<assistant>' : '')
        );
      }
      async loadWhisper(): Promise<void> {}
      transcribe(job: TranscribeJob) {
        return this.run(() => transcribed(job));
      }
      submit(job: NativeJob) {
        return this.run(() => (job.kind === 'score' ? score(job) : spans(job)));
      }
      private run<R>(make: () => R): { id: number; result: Promise<R> } {
        const id = ++state.submitted;
        const result = new Promise<R>((resolve, reject) => {
          const timer = setTimeout(() => {
            running.delete(id);
            if (state.behaviour.failures > 0) {
              state.behaviour.failures--;
              return reject(Object.assign(new Error('fake decode failure'), { code: 'runner_error' }));
            }
            // Every job runs at once (no queue): all its time is time on a slot.
            resolve(Object.assign(make() as object, { decodeMs: state.behaviour.delayMs }) as R);
          }, state.behaviour.delayMs);
          running.set(id, () => {
            clearTimeout(timer);
            running.delete(id);
            state.cancelled++;
            reject(Object.assign(new Error('cancelled'), { code: 'cancelled' }));
          });
        });
        return { id, result };
      }
      tokenBytes(tokens: Int32Array): Int32Array {
        return tokens.map((t) => Buffer.byteLength(String.fromCharCode(t)));
      }
      specialTokens() {
        return { eos: 0, eot: 1 };
      }
      cancel(id: number): void {
        running.get(id)?.();
      }
      stats(): PoolStats {
        return {
          slots: 2,
          running: running.size,
          queued: 0,
          backgroundRunning: 0,
          backgroundQueued: 0,
          completed: 0,
          failed: 0,
          cancelled: state.cancelled,
          rejected: 0,
          promptCacheBytes: 0,
          promptCachePrompts: 0,
          promptCacheLoads: 0,
          promptCacheTokens: 0,
          promptCacheBorrows: 0,
          promptCacheBorrowedTokens: 0,
        };
      }
      close(): void {
        for (const cancel of [...running.values()]) cancel();
      }
    },
    // Letter counts as the "embedding": windows sharing letters with the query rank first.
    Encoder: class implements NativeEncoder {
      async load() {
        return { dimensions: 26, windowTokens: 512 };
      }
      async embed(texts: string[]): Promise<Float32Array> {
        const out = new Float32Array(texts.length * 26);
        texts.forEach((t, i) => {
          for (const c of t.toLowerCase()) if (c >= 'a' && c <= 'z') out[i * 26 + c.charCodeAt(0) - 97]! += 1;
          const row = out.subarray(i * 26, i * 26 + 26);
          const norm = Math.hypot(...row) || 1;
          row.forEach((v, d) => (row[d] = v / norm));
        });
        return out;
      }
      close(): void {}
    },
    SpeakerEncoder: class implements NativeSpeakerEncoder {
      readonly dims = {
        mels: 80,
        embedding: 4,
        partialFrames: 160,
        maxPartialFrames: 160,
      };
      async embed(_pcm: Float32Array, starts: Int32Array): Promise<Float32Array> {
        state.embeddings++;
        await new Promise((r) => setTimeout(r, state.behaviour.speakerDelayMs));
        return Float32Array.from({ length: starts.length * 4 }, (_, i) => (i % 4 === 0 ? 1 : 0));
      }
    },
  };
  const running = new Map<number, () => void>();
  return state;
}

function transcribed(job: TranscribeJob): TranscribeResult {
  const tokens = ['one', 'two', 'three', 'four'].map((w, i) => ({
    text: ` ${w}`,
    start: i * 0.5,
    end: i * 0.5 + 0.4,
    aligned: -1,
    p: 0.9,
  }));
  const samples = 32000;
  return {
    samples,
    format: 'wav',
    codec: 'pcm_s16le',
    segments: [{ start: 0, end: 2, noSpeech: 0, tokens }],
    energy: new Float32Array(samples / 160),
    ...(job.wantPcm ? { pcm: new Float32Array(samples) } : {}),
    promptTokens: 0,
    cachedTokens: 0,
    decodeMs: 1,
  };
}

function score(job: ScoreJob): ScoreResult {
  const logprobs = new Float32Array(job.branches.length * job.options.length);
  job.branches.forEach((branch, b) => {
    const yes = String.fromCharCode(...branch).includes('[true]');
    job.options.forEach((option, o) => {
      const isYes = String.fromCharCode(...option).toLowerCase() === 'yes';
      logprobs[b * job.options.length + o] = isYes === yes ? -0.1 : -2.5;
    });
  });
  const promptTokens = job.prefix.length + job.branches.reduce((n, b) => n + b.length, 0);
  if (!job.hidden) return { logprobs, promptTokens, cachedTokens: 0, decodeMs: 1 };
  const layers = job.hiddenLayers ?? [-1];
  const width = layers.length * FAKE_HIDDEN_SIZE;
  const hidden = new Float32Array(job.branches.length * width);
  job.branches.forEach((branch, b) =>
    layers.forEach((il, k) =>
      branch.forEach((t, i) => (hidden[b * width + k * FAKE_HIDDEN_SIZE + (i % FAKE_HIDDEN_SIZE)]! += t * (il + 2))),
    ),
  );
  return { logprobs, hidden, promptTokens, cachedTokens: 0, decodeMs: 1 };
}

function spans(job: SpanJob): SpanResult {
  const source = String.fromCharCode(...job.source);
  const firstWord = Math.max(1, source.search(/\s|$/));
  const scoredFrom = job.branches.length - (job.scoredBranches ?? 0);
  const found = job.branches.map((b, i) =>
    i >= scoredFrom || String.fromCharCode(...b).includes('[none]')
      ? []
      : [{ start: 0, end: firstWord, logprob: -0.2, firstLogprob: -0.1, closeLogprob: -0.05, stopLogprob: -3 }],
  );
  const options = job.firstOptions?.length ?? 0;
  const promptTokens = job.prefix.length + job.branches.reduce((n, b) => n + b.length, 0);
  return {
    spans: found,
    noneLogprobs: Float32Array.from(job.branches, (b) => (String.fromCharCode(...b).includes('[none]') ? -0.01 : -5)),
    // The first option wins exactly when the branch says "[true]", as in score().
    firstLogprobs: Float32Array.from({ length: job.branches.length * options }, (_, k) =>
      (k % options === 0) === String.fromCharCode(...job.branches[Math.floor(k / options)]!).includes('[true]')
        ? -0.1
        : -2.4,
    ),
    promptTokens,
    cachedTokens: 0,
    decodeMs: 1,
  };
}
