// Audio settings, from the environment (documented in docs/audio.md).
import { DEFAULT_VAD_MODEL } from '../models/manifest.js';
import { DEFAULT_WHISPER_MODEL } from '../models/whisper-models.js';

export interface AudioSettings {
  /** Largest accepted audio body, bytes (DM_AUDIO_MAX_BYTES). */
  readonly maxBytes: number;
  /** Longest accepted audio, seconds, declared or decoded (DM_AUDIO_MAX_SECONDS). */
  readonly maxSeconds: number;
  /** Whisper language code, or "auto" to detect it per file (DM_AUDIO_LANGUAGE). */
  readonly language: string;
  /** Whisper model id from src/models/whisper-models.ts (DM_WHISPER_MODEL). */
  readonly model: string;
  /** An explicit whisper.cpp ggml file; skips the model store (DM_WHISPER_MODEL_PATH). */
  readonly modelPath?: string;
  /** Voice activity model id from the manifest, or "none" (DM_VAD_MODEL). */
  readonly vad: string;
}

export const AUDIO_DEFAULTS: AudioSettings = Object.freeze({
  maxBytes: 100 * 1024 * 1024, // an hour of 192 kbit/s mp3 is ~86 MB
  maxSeconds: 3600,
  language: 'en',
  model: DEFAULT_WHISPER_MODEL,
  vad: DEFAULT_VAD_MODEL,
});

export function audioSettings(env: NodeJS.ProcessEnv = process.env): AudioSettings {
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`invalid configuration: ${name} must be a number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
    return n;
  };
  const language = env.DM_AUDIO_LANGUAGE || AUDIO_DEFAULTS.language;
  if (!/^(auto|[a-z]{2,3}|haw|yue)$/.test(language)) throw new Error(`invalid configuration: DM_AUDIO_LANGUAGE must be a whisper language code or "auto"`);
  return Object.freeze({
    maxBytes: Math.floor(number('DM_AUDIO_MAX_BYTES', AUDIO_DEFAULTS.maxBytes, 1024, 2 ** 31 - 1)),
    maxSeconds: number('DM_AUDIO_MAX_SECONDS', AUDIO_DEFAULTS.maxSeconds, 1, 86400),
    language,
    model: env.DM_WHISPER_MODEL || AUDIO_DEFAULTS.model,
    modelPath: env.DM_WHISPER_MODEL_PATH || undefined,
    vad: env.DM_VAD_MODEL || AUDIO_DEFAULTS.vad,
  });
}
