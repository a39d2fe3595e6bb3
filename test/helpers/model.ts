// The real decision model for native tests: the one `npm test` pulled (DM_MODEL_PATH wins).
import { DEFAULT_DECISION_MODEL, DEFAULT_ENCODER_MODEL } from '../../src/models/manifest.js';
import { resolveModel, storeEnv } from '../../src/models/store.js';

export function testModelPath(): Promise<string> {
  return resolveModel(process.env.DM_MODEL ?? DEFAULT_DECISION_MODEL, { path: storeEnv().path, offline: true });
}

/** The sentence encoder `npm test` pulled. */
export function testEncoderPath(): Promise<string> {
  return resolveModel(DEFAULT_ENCODER_MODEL, { offline: true });
}

/** A text of about `tokens` tokens: long enough to keep a slot busy for a while. */
export function longText(tokens: number): string {
  const sentence = 'The committee reviewed the annual budget and postponed the vote on the new library wing. ';
  return sentence.repeat(Math.ceil(tokens / 17)).slice(0, 20000);
}
