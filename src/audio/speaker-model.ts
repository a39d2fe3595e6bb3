// The speaker encoder of this process (native/speaker_encoder.h), loaded once; its weights file
// is made by src/models/converters/speaker.ts.
import { readFile } from 'node:fs/promises';
import { loadBinding, type NativeSpeakerEncoder } from '../binding.js';
import { DEFAULT_SPEAKER_MODEL } from '../models/manifest.js';
import { resolveModel, type ResolveOptions } from '../models/store.js';

let shared: Promise<NativeSpeakerEncoder> | undefined;

/**
 * The gain the encoder expects on a file: resemblyzer's normalize_volume raises the whole file
 * to -30 dBFS RMS and never lowers it. Computed once per file, since partials see only a part.
 */
export function loudnessGain(pcm: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
  if (sum === 0) return 1;
  const change = -30 - 10 * Math.log10(sum / pcm.length);
  return change > 0 ? 10 ** (change / 20) : 1;
}

/**
 * The process's speaker encoder, loaded on first use from `store.path` (DM_SPEAKER_MODEL_PATH, a
 * DMSPKENC file) or else the model store (fetched and converted on first use if `models pull`
 * has not already done it). A failed load is not cached, so a later call tries again.
 */
export function speakerEncoder(store: ResolveOptions = {}): Promise<NativeSpeakerEncoder> {
  shared ??= (async () => {
    const { SpeakerEncoder } = loadBinding();
    if (!SpeakerEncoder) throw new Error('this addon build has no speaker encoder');
    const path = store.path ?? (await resolveModel(DEFAULT_SPEAKER_MODEL, store));
    return new SpeakerEncoder(await readFile(path));
  })().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}
