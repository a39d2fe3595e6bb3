// The whole native surface, typed in one place. Everything else talks to this file, never to
// the .node module directly.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface LoadOptions {
  modelPath: string;
  slots: number; // native threads, each with its own llama context
  threads: number; // CPU threads per slot
  contextSize: number; // KV cache tokens per slot
  batchSize: number; // tokens per llama_decode
  sequences: number; // branches decoded side by side per slot (>= 3)
}

export interface ModelInfo {
  description: string;
  sizeBytes: number;
  parameters: number;
  trainContext: number;
  vocabSize: number;
  chatTemplate: string | null;
}

/** Score every option after every branch of a shared prefix (see native/jobs.h). */
export interface ScoreJob {
  prefix: Int32Array;
  branches: Int32Array[];
  options: Int32Array[];
}

export interface ScoreResult {
  /** branches x options, row-major: log P(option | prefix + branch). */
  logprobs: Float32Array;
  promptTokens: number;
  cachedTokens: number;
  decodeMs: number;
}

export interface PoolStats {
  slots: number;
  running: number;
  queued: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface ChatMessage {
  role: string;
  content: string;
}

/** Rejections carry code 'cancelled' (job aborted or engine closed) or 'runner_error'. */
export interface NativeEngine {
  load(options: LoadOptions): Promise<void>;
  info(): ModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  applyTemplate(messages: ChatMessage[], addAssistant: boolean): string;
  submit(job: ScoreJob): { id: number; result: Promise<ScoreResult> };
  cancel(id: number): void;
  stats(): PoolStats;
  close(): void;
}

export interface NativeBinding {
  Engine: new () => NativeEngine;
  versions(): { whisper: string; system: string };
}

const addonPath = fileURLToPath(new URL('../../build/Release/decision_machine.node', import.meta.url));

let cached: NativeBinding | undefined;

/** Loads the addon once; a clear error if it was never built. */
export function loadBinding(): NativeBinding {
  if (cached) return cached;
  if (!existsSync(addonPath)) {
    throw new Error(`native addon not built (${addonPath} is missing): run \`npm install\` or \`npm run build\``);
  }
  cached = createRequire(import.meta.url)(addonPath) as NativeBinding;
  return cached;
}
