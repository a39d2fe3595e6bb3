// The bridge to the diarization module (src/audio/diarize.ts, written separately): speaker index
// per word, 0 for the first voice heard. Loaded on first use so transcription works without it.
import { ServiceError } from '../errors.js';

type Diarize = (pcm: Float32Array, words: { start: number; end: number }[], ...rest: unknown[]) => Promise<number[]>;

let diarizeFn: Promise<Diarize | undefined> | undefined;

export async function speakersFor(pcm: Float32Array, words: { start: number; end: number }[], signal?: AbortSignal): Promise<number[]> {
  if (words.length === 0) return [];
  diarizeFn ??= import(new URL('./diarize.js', import.meta.url).href).then(
    (m: { diarize?: Diarize }) => m.diarize,
    () => undefined,
  );
  const diarize = await diarizeFn;
  if (!diarize) throw new ServiceError('unsupported_request', 'diarize: speaker labels are not available in this build; send diarize=false');
  const speakers = await diarize(pcm, words, { signal });
  if (speakers.length !== words.length) throw new Error(`diarization returned ${speakers.length} labels for ${words.length} words`);
  return speakers;
}
