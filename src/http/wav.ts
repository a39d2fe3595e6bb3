// A WAV's data chunk declares its length in bytes. FFmpeg reads a short file as far as it goes
// and reports the length it found, so the "less than 90% of what it declares" rule of
// docs/audio.md is checked here, from the header, before the file reaches a slot.
import { ERRORS } from '../errors.js';

const STREAMING_SIZE = 0x7fff0000;

/** Throws invalid_request when `audio` is a RIFF/WAVE file holding under 90% of its data chunk. */
export function checkWavLength(audio: Uint8Array): void {
  if (audio.length < 12 || ascii(audio, 0) !== 'RIFF' || ascii(audio, 8) !== 'WAVE') return;
  const view = new DataView(audio.buffer, audio.byteOffset, audio.byteLength);
  let byteRate = 0;
  // Chunks are walked, not searched: a bounded loop over at most a few headers.
  for (let at = 12; at + 8 <= audio.length;) {
    const id = ascii(audio, at);
    const size = view.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 20 <= audio.length) byteRate = view.getUint32(at + 16, true);
    if (id === 'data') {
      // A stream written before its length was known declares 0, 0xFFFFFFFF (FFmpeg) or about
      // 2 GiB (espeak-ng and sox write 0x7FFFF000 to a pipe): no length to check against.
      if (size === 0 || size >= STREAMING_SIZE || byteRate === 0) return;
      const declared = size / byteRate;
      const held = (audio.length - at - 8) / byteRate;
      if (declared > 1 && held < 0.9 * declared - 0.5) {
        throw ERRORS.invalidRequest(
          `body: the audio file is truncated: it declares ${declared.toFixed(1)} s but holds ${held.toFixed(1)} s`,
        );
      }
      return;
    }
    at += 8 + size + (size % 2);
  }
}

function ascii(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}
