// Configuration: one schema, one frozen defaults object, environment variables mapped in one place.
// Nothing else in src/ reads the environment: the service, the CLI and the library's open() pass
// a Config (or the parts of it a module needs) down.
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const Int = (min: number, max: number, description: string) =>
  Type.Integer({ minimum: min, maximum: max, description });
const Switch = (description: string) => Type.Union([Type.Literal('on'), Type.Literal('off')], { description });
const Id = (description: string) => Type.String({ minLength: 1, description });

export const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1, description: 'address to listen on' }),
  port: Int(0, 65535, 'TCP port (0 = any free port)'),
  model: Type.String({ minLength: 1, description: 'decision model id from the manifest' }),
  modelPath: Type.Optional(Type.String({ minLength: 1, description: 'explicit GGUF path; skips the model store' })),
  encoder: Type.String({
    minLength: 1,
    description: 'sentence encoder that picks the windows of long texts the model reads; "none" reads them whole',
  }),
  slots: Int(1, 64, 'inference slots: native threads, each with its own context'),
  threads: Int(1, 256, 'CPU threads per slot'),
  queue: Int(0, 1024, 'requests that may wait for a slot before new ones get 529'),
  contextSize: Int(512, 131072, 'KV cache tokens per slot'),
  batchSize: Int(32, 8192, 'tokens per decode call'),
  promptCacheMiB: Int(0, 1 << 20, 'host memory, MiB, for the KV of prompts the slots moved away from; 0: none'),
  textReuse: Switch(
    "on: a text another capability's prompt already read is taken from the prompt cache, not prefilled again",
  ),
  maxBodyBytes: Int(1024, 1 << 30, 'largest accepted request body, bytes'),
  overloadDelayMs: Int(
    0,
    1000,
    'a 529 is sent this long after the refusal, so clients retrying at once cannot starve the slots',
  ),
  requestTimeoutMs: Int(
    1,
    86_400_000,
    'longest a request may run, ms; past it its jobs are cancelled and it gets 504 (x-request-timeout-ms can lower it)',
  ),
  keyMaxInflight: Int(
    0,
    1024,
    'requests one key may have in flight at once, with key checking on; 0 = half of DM_SLOTS (at least 1)',
  ),
  drainTimeoutMs: Int(0, 86_400_000, 'on SIGTERM, longest wait for admitted requests before the process exits, ms'),
  logLevel: Type.Union([Type.Literal('info'), Type.Literal('error'), Type.Literal('silent')]),
  nativeLog: Type.Union(
    [Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error'), Type.Literal('silent')],
    { description: "llama.cpp's and whisper.cpp's own log threshold (Engine option nativeLog)" },
  ),
  auth: Switch('bearer key checking on every /v1 route'),
  databaseUrl: Type.String({ minLength: 1, description: 'keys and usage: a SQLite file path, or postgres://...' }),
  journalDir: Type.String({
    minLength: 1,
    description: 'where usage rows the database could not take wait, durably, until it answers again',
  }),
  journalMaxMiB: Int(1, 1 << 20, "largest size of this process's journal, MiB; past it calls are refused with 503"),
  redisUrl: Type.Optional(
    Type.String({ pattern: '^rediss?://', description: 'rate counters and revocation fan-out shared by replicas' }),
  ),
  rateLimit: Int(
    0,
    1_000_000,
    'requests per minute per key (each item of texts/statements/questions counts); 0 = none',
  ),
  tokenLimit: Int(
    0,
    1_000_000_000,
    'input tokens per minute per key, counted after each answer, per replica; 0 = none',
  ),
  keyCacheSeconds: Int(0, 60, 'how long a key verdict is cached (a revoked key works at most this long)'),
  feedbackRetentionDays: Int(
    0,
    3650,
    'days a decision (its request) is kept so that it can be corrected; 0 keeps none (feedback then takes whole fit lines)',
  ),
  feedbackTexts: Type.Union([Type.Literal('keep'), Type.Literal('hash')], {
    description:
      "hash: a kept decision or correction stores its text's SHA-256 and what the model read of it, never the text",
  }),
  cacheDir: Type.String({ minLength: 1, description: 'where fetched and converted models are kept' }),
  offline: Switch('on: never download a model (the cache, pip and local converters only)'),
  audio: Switch('POST /v1/audio/transcribe; off loads no whisper, VAD or speaker model'),
  audioMaxBytes: Int(1024, 2 ** 31 - 1, 'largest accepted audio body, bytes'),
  audioMaxSeconds: Type.Number({
    minimum: 1,
    maximum: 86400,
    description: 'longest accepted audio, declared or decoded, seconds',
  }),
  audioLanguage: Type.String({
    pattern: '^(auto|[a-z]{2,3}|haw|yue)$',
    description: 'whisper language code, or "auto" to detect it per file',
  }),
  whisperModel: Id('whisper model id from the manifest'),
  whisperModelPath: Type.Optional(Id('explicit whisper.cpp ggml file; skips the model store')),
  vadModel: Id('voice activity model id from the manifest, or "none"'),
  speakerModelPath: Type.Optional(Id('explicit speaker encoder (DMSPKCAM, CAM++) file; skips the model store')),
});

export type Config = Static<typeof ConfigSchema>;

const DATA_DIR = join(process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'decision-machine-1');

export const DEFAULTS: Readonly<Config> = Object.freeze({
  host: '127.0.0.1',
  port: 8080,
  model: 'qwen2.5-coder-1.5b-instruct-q4_k_m', // manifest ids (src/models/manifest.ts reads them here)
  encoder: 'all-minilm-l6-v2-q8_0', // the sentence encoder that ranks windows of long texts
  slots: 2, // the sweep of docs/performance.md: on 2 cores 2 slots x the CPU count in threads is best or tied
  threads: Math.min(availableParallelism(), 8),
  queue: 2,
  contextSize: 6144, // tokens per slot: a 20,000-character English text (~4,500) plus its statements
  batchSize: 256, // tokens per decode: as fast as 512 here, half the compute buffer
  // About 9,000 tokens of the default model's KV (28 KB a token): the instructions of every
  // capability and label set a pipeline switches between, with the texts they were last asked about.
  promptCacheMiB: 256,
  // Off: a borrowed text approximates a prefill, so its decision would depend on what ran before
  // it (docs/performance.md, "Same request, same answer"). On: a second decision about a text at
  // a third of the first's cost, within a point of a fresh prefill ("A second decision").
  textReuse: 'off',
  maxBodyBytes: 4 * 1024 * 1024, // 32 texts x 20,000 characters, with JSON escaping
  overloadDelayMs: 100, // measured with bench/retry-storm.ts (docs/operations.md)
  // Above the longest valid request here (about 90 s; see README, "Limits"), with room for a slower machine.
  requestTimeoutMs: 300_000,
  // Half the slots: one key cannot hold them all, so another key's request finds a slot free
  // (docs/operations.md, "Fair admission"); DM_SLOTS + DM_QUEUE or more is no cap.
  keyMaxInflight: 0,
  drainTimeoutMs: 330_000, // the request ceiling plus time to write the last usage rows
  logLevel: 'info',
  nativeLog: 'error',
  // Off by default, as the spec's launch period has it; start-up says so loudly (docs/operations.md).
  auth: 'off',
  databaseUrl: join(DATA_DIR, 'service.db'),
  // Per machine, beside the default SQLite file: a journal is replayed into the store it was written for.
  journalDir: join(DATA_DIR, 'journal'),
  journalMaxMiB: 256, // about a million rows: a day's outage at 10 answers a second
  rateLimit: 300,
  tokenLimit: 1_000_000,
  keyCacheSeconds: 60,
  feedbackRetentionDays: 7,
  feedbackTexts: 'keep',
  cacheDir: join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'decision-machine-1', 'models'),
  offline: 'off',
  audio: 'on',
  audioMaxBytes: 100 * 1024 * 1024, // bytes: an hour of 192 kbit/s mp3 is ~86 MB
  audioMaxSeconds: 3600, // seconds
  audioLanguage: 'en',
  whisperModel: 'whisper-base', // chosen from measured WER and real-time factor (docs/models.md)
  vadModel: 'silero-vad-v5',
});

/** Environment variable -> config key. */
export const ENV = Object.freeze({
  HOST: 'host',
  PORT: 'port',
  DM_MODEL: 'model',
  DM_MODEL_PATH: 'modelPath',
  DM_ENCODER: 'encoder',
  DM_SLOTS: 'slots',
  DM_THREADS: 'threads',
  DM_QUEUE: 'queue',
  DM_CONTEXT: 'contextSize',
  DM_BATCH: 'batchSize',
  DM_PROMPT_CACHE_MIB: 'promptCacheMiB',
  DM_TEXT_REUSE: 'textReuse',
  DM_MAX_BODY_BYTES: 'maxBodyBytes',
  DM_OVERLOAD_DELAY_MS: 'overloadDelayMs',
  DM_REQUEST_TIMEOUT_MS: 'requestTimeoutMs',
  DM_KEY_MAX_INFLIGHT: 'keyMaxInflight',
  DM_DRAIN_TIMEOUT_MS: 'drainTimeoutMs',
  DM_LOG_LEVEL: 'logLevel',
  DM_NATIVE_LOG: 'nativeLog',
  DM_AUTH: 'auth',
  DM_DATABASE_URL: 'databaseUrl',
  DM_JOURNAL_DIR: 'journalDir',
  DM_JOURNAL_MAX_MIB: 'journalMaxMiB',
  DM_REDIS_URL: 'redisUrl',
  DM_RATE_LIMIT: 'rateLimit',
  DM_TOKEN_LIMIT: 'tokenLimit',
  DM_KEY_CACHE_SECONDS: 'keyCacheSeconds',
  DM_FEEDBACK_RETENTION: 'feedbackRetentionDays',
  DM_FEEDBACK_TEXTS: 'feedbackTexts',
  DM_CACHE_DIR: 'cacheDir',
  DM_OFFLINE: 'offline',
  DM_AUDIO: 'audio',
  DM_AUDIO_MAX_BYTES: 'audioMaxBytes',
  DM_AUDIO_MAX_SECONDS: 'audioMaxSeconds',
  DM_AUDIO_LANGUAGE: 'audioLanguage',
  DM_WHISPER_MODEL: 'whisperModel',
  DM_WHISPER_MODEL_PATH: 'whisperModelPath',
  DM_VAD_MODEL: 'vadModel',
  DM_SPEAKER_MODEL_PATH: 'speakerModelPath',
} as const satisfies Record<string, keyof Config>);

// Switches also take the spellings environments use for booleans.
const SWITCH: Record<string, 'on' | 'off'> = { on: 'on', off: 'off', '1': 'on', '0': 'off', true: 'on', false: 'off' };
/** Every setting whose schema is a Switch. */
const SWITCH_KEYS: ReadonlySet<string> = new Set(
  Object.entries(ConfigSchema.properties)
    .filter(([, s]) => 'anyOf' in s && s.anyOf.map((x: { const?: unknown }) => x.const).join() === 'on,off')
    .map(([k]) => k),
);

/**
 * Defaults, overridden by the environment, overridden by explicit values; validated. `defaults`
 * lets an embedder start from other defaults (the library's open() has audio off).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
  defaults: Readonly<Config> = DEFAULTS,
): Config {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [name, key] of Object.entries(ENV)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const schema = ConfigSchema.properties[key];
    if (schema.type === 'number' || schema.type === 'integer')
      merged[key] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    else if (SWITCH_KEYS.has(key)) merged[key] = SWITCH[raw] ?? raw;
    else if (key === 'nativeLog')
      merged[key] = SWITCH[raw] === 'on' ? 'debug' : raw; // DM_NATIVE_LOG=1: everything
    else merged[key] = raw;
  }
  Object.assign(merged, overrides);
  const errors = [...Value.Errors(ConfigSchema, merged)];
  if (errors.length > 0) {
    const names = Object.fromEntries(Object.entries(ENV).map(([n, k]) => [k, n]));
    const detail = errors.slice(0, 3).map((e) => {
      const key = e.path.slice(1);
      return `${names[key] ?? key}: ${e.message} (got ${JSON.stringify(merged[key])})`;
    });
    throw new Error(`invalid configuration: ${detail.join('; ')}`);
  }
  return Object.freeze(merged as Config);
}
