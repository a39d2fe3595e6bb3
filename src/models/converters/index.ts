// Models that no registry carries in a format the addon loads: their original files are fetched
// (fetch.ts) and converted here. The store checks the output's size and sha256 like any
// download, so a converter must be deterministic.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bertToGguf } from './bert.js';
import { campplusModelFromDir } from './campplus.js';
import { sileroVadFromDir } from './silero-vad.js';
import { ct2ToWhisperGgml, readWhisperAssets } from './whisper.js';
import type { ConverterId, ModelEntry } from '../manifest.js';

/** Converter id -> the bytes of the model file, from a folder of input files. */
export const CONVERTERS: Record<ConverterId, (dir: string, entry: ModelEntry) => AsyncIterable<Uint8Array>> = {
  'bert-gguf': (dir, entry) => bertToGguf(dir, entry.ggufName),
  'campplus-speaker': (dir) => campplusModelFromDir(dir),
  'silero-vad': (dir) => sileroVadFromDir(dir),
  'whisper-ct2': (dir) => whisperFromDir(dir),
};

/** `dir` holds `model.bin` (CTranslate2) and `sdist.tar.gz` (openai-whisper's assets). */
async function* whisperFromDir(dir: string): AsyncIterable<Uint8Array> {
  const assets = readWhisperAssets(await readFile(join(dir, 'sdist.tar.gz')));
  yield* ct2ToWhisperGgml(await readFile(join(dir, 'model.bin')), assets);
}
