// The real models for the real-model tests (test/real-model/, test/audio/): the ones `npm test` pulled
// (DM_MODEL_PATH wins).
import { readFile } from 'node:fs/promises';
import { loadBinding } from '../../src/binding.js';
import { Engine, type SpeakerEmbedder } from '../../src/engine/engine.js';
import { DEFAULT_ENCODER_MODEL, DEFAULT_SPEAKER_MODEL } from '../../src/models/manifest.js';
import { resolveModel } from '../../src/models/store.js';
import { loadConfig } from '../../src/config.js';

export function testModelPath(): Promise<string> {
  const config = loadConfig();
  return resolveModel(config.model, { cacheDir: config.cacheDir, path: config.modelPath, offline: true });
}

/**
 * The environment a real-model test runs `decision-machine` in on the store at `databaseUrl`:
 * the test model on one small slot, no sentence encoder, offline.
 */
export async function cliEnv(databaseUrl: string): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    DM_DATABASE_URL: databaseUrl,
    DM_MODEL_PATH: await testModelPath(),
    DM_ENCODER: 'none',
    DM_SLOTS: '1',
    DM_CONTEXT: '2048',
    DM_PROMPT_CACHE_MIB: '64',
    DM_OFFLINE: 'on',
  };
}

/** The sentence encoder `npm test` pulled. */
export function testEncoderPath(): Promise<string> {
  return resolveModel(DEFAULT_ENCODER_MODEL, { cacheDir: loadConfig().cacheDir, offline: true });
}

/** The real decision model as the real-model tests run it (2 slots x 2 threads), with the sentence encoder if asked. */
export async function openTestEngine({ encoder = false } = {}): Promise<Engine> {
  return Engine.open({
    modelPath: await testModelPath(),
    ...(encoder ? { encoderPath: await testEncoderPath() } : {}),
    slots: 2,
    threads: 2,
    queue: 2,
    contextSize: 4096,
    batchSize: 256,
    promptCacheMiB: 64,
  });
}

/** The addon's load options (all but modelPath) for one small slot, without a prompt cache. */
export const SMALL_LOAD = Object.freeze({
  slots: 1,
  threads: 1,
  contextSize: 512,
  batchSize: 64,
  sequences: 4,
  promptCacheMiB: 0,
  borrowTexts: false,
});

/** The speaker encoder `npm test` pulled, outside an engine (for diarization's own tests). */
export async function testSpeakerEncoder(model = DEFAULT_SPEAKER_MODEL): Promise<SpeakerEmbedder> {
  const path = await resolveModel(model, { cacheDir: loadConfig().cacheDir, offline: true });
  return new (loadBinding().SpeakerEncoder!)(await readFile(path));
}

/** A text of about `tokens` tokens: long enough to keep a slot busy for a while. */
export function longText(tokens: number): string {
  const sentence = 'The committee reviewed the annual budget and postponed the vote on the new library wing. ';
  return sentence.repeat(Math.ceil(tokens / 17)).slice(0, 20000);
}
