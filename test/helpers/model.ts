// The real decision model for native tests: the one `npm test` pulled (DM_MODEL_PATH wins).
import { DEFAULT_ENCODER_MODEL } from '../../src/models/manifest.js';
import { resolveModel } from '../../src/models/store.js';
import { loadConfig } from '../../src/config.js';

export function testModelPath(): Promise<string> {
  const config = loadConfig();
  return resolveModel(config.model, { cacheDir: config.cacheDir, path: config.modelPath, offline: true });
}

/** The sentence encoder `npm test` pulled. */
export function testEncoderPath(): Promise<string> {
  return resolveModel(DEFAULT_ENCODER_MODEL, { cacheDir: loadConfig().cacheDir, offline: true });
}

/** A text of about `tokens` tokens: long enough to keep a slot busy for a while. */
export function longText(tokens: number): string {
  const sentence = 'The committee reviewed the annual budget and postponed the vote on the new library wing. ';
  return sentence.repeat(Math.ceil(tokens / 17)).slice(0, 20000);
}
