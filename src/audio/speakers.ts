// Speaker labels for transcribed words, from the diarization module (src/audio/diarize.ts):
// a speaker index per word, 0 for the first voice heard.
import { diarize } from './diarize.js';

export async function speakersFor(pcm: Float32Array, words: { start: number; end: number }[], signal?: AbortSignal): Promise<number[]> {
  const speakers = await diarize(pcm, words, { signal });
  if (speakers.length !== words.length) throw new Error(`diarization returned ${speakers.length} labels for ${words.length} words`);
  return speakers;
}
