// Test audio made at test time: espeak-ng speech, encoded by ffmpeg into the seven formats the
// service accepts, plus word error rate. The Debian tools are installed when missing (as root).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOOLS: Record<string, string> = { 'espeak-ng': 'espeak-ng', sox: 'sox', ffmpeg: 'ffmpeg' };

export function ensureAudioTools(): void {
  const missing = Object.keys(TOOLS).filter((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `test audio needs ${missing.join(', ')}: apt-get install ${missing.map((m) => TOOLS[m]).join(' ')}`,
    );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing.map((m) => TOOLS[m])], { stdio: 'ignore', env });
}

/** espeak-ng voices used: two accents, male and female variants. */
export const VOICES = ['en-us', 'en-gb', 'en-us+f3', 'en-gb-scotland+m3'];

/** A WAV file (22,050 Hz mono, espeak-ng's output) of `text` in `voice`. */
export function speak(text: string, voice = 'en-us', wordsPerMinute = 160): Buffer {
  return execFileSync('espeak-ng', ['-v', voice, '-s', String(wordsPerMinute), '--stdout', text], {
    maxBuffer: 1 << 28,
  });
}

export const FORMATS = {
  wav: { ext: 'wav', args: ['-ar', '44100', '-ac', '2', '-c:a', 'pcm_s16le'], type: 'audio/wav' },
  mp3: { ext: 'mp3', args: ['-ar', '44100', '-c:a', 'libmp3lame', '-b:a', '64k'], type: 'audio/mpeg' },
  m4a: { ext: 'm4a', args: ['-ar', '48000', '-ac', '2', '-c:a', 'aac', '-b:a', '96k'], type: 'audio/mp4' },
  ogg: { ext: 'ogg', args: ['-ar', '32000', '-c:a', 'libvorbis'], type: 'audio/ogg' },
  opus: { ext: 'opus', args: ['-ar', '48000', '-c:a', 'libopus', '-b:a', '32k'], type: 'audio/opus' },
  flac: { ext: 'flac', args: ['-ar', '16000', '-c:a', 'flac'], type: 'audio/flac' },
  webm: { ext: 'webm', args: ['-ar', '48000', '-ac', '2', '-c:a', 'libopus', '-b:a', '48k'], type: 'audio/webm' },
} as const;
export type Format = keyof typeof FORMATS;

/** Re-encodes any audio file with ffmpeg (through temporary files: mp4 needs a seekable output). */
export function encode(audio: Buffer, format: Format, extra: string[] = []): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'dm-audio-'));
  try {
    const input = join(dir, 'in');
    const output = join(dir, `out.${FORMATS[format].ext}`);
    writeFileSync(input, audio);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', input, ...FORMATS[format].args, ...extra, output]);
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs sox on WAV bytes (e.g. ['silence', ...] effects) and returns WAV bytes. */
export function sox(wav: Buffer, effects: string[], outputOptions: string[] = []): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'dm-sox-'));
  try {
    writeFileSync(join(dir, 'in.wav'), wav);
    execFileSync('sox', [join(dir, 'in.wav'), ...outputOptions, join(dir, 'out.wav'), ...effects]);
    return readFileSync(join(dir, 'out.wav'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 16-bit mono PCM WAV from float samples. */
export function wavOf(samples: Float32Array, rate: number): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => data.writeInt16LE(Math.round(Math.max(-1, Math.min(1, s)) * 32767), 2 * i));
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** Samples of a 16-bit mono WAV (as espeak-ng and sox write it) and its rate. */
export function samplesOf(wav: Buffer): { samples: Float32Array; rate: number } {
  const rate = wav.readUInt32LE(24);
  const data = wav.indexOf('data', 12);
  const bytes = wav.subarray(data + 8);
  const samples = new Float32Array(Math.floor(bytes.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(2 * i) / 32768;
  return { samples, rate };
}

// As Whisper's English normaliser does: number words become digits and titles are spelled out,
// so "ten" against "10" or "Mr." against "mister" is no error.
const NUMBERS =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'.split(
    ' ',
  );
const SPELLED: Record<string, string> = { mr: 'mister', mrs: 'missus', dr: 'doctor', st: 'saint' };

/** Lowercase words without punctuation, number words as digits, titles spelled out. */
export function normalise(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’']/g, '')
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => (NUMBERS.includes(w) ? String(NUMBERS.indexOf(w)) : (SPELLED[w] ?? w)));
}

/** Word error rate: word-level edit distance over the reference length. */
export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const r = normalise(reference);
  const h = normalise(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++)
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    prev = row;
  }
  return { errors: prev[h.length], words: r.length };
}

/**
 * Pairs of reference and hypothesis word indices that a minimum edit alignment lines up: equal
 * words and substitutions (a misheard word still has a time). Both lists are normalised words.
 */
export function alignedPairs(r: string[], h: string[]): [number, number][] {
  const cost = Array.from({ length: r.length + 1 }, (_, i) =>
    Array.from({ length: h.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= r.length; i++)
    for (let j = 1; j <= h.length; j++)
      cost[i]![j] = Math.min(
        cost[i - 1]![j]! + 1,
        cost[i]![j - 1]! + 1,
        cost[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1),
      );
  const pairs: [number, number][] = [];
  for (let i = r.length, j = h.length; i > 0 && j > 0;) {
    const diagonal = cost[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1);
    if (cost[i]![j] === diagonal) pairs.unshift([--i, --j]);
    else if (cost[i]![j] === cost[i - 1]![j]! + 1) i--;
    else j--;
  }
  return pairs;
}

/** Sentences for the WER set: plain English, no digits (espeak-ng and whisper write numbers differently). */
export const SENTENCES = [
  'The quick brown fox jumps over the lazy dog near the old stone bridge.',
  'Please send the quarterly report to the finance team before Friday afternoon.',
  'The weather today is cloudy with a chance of rain in the evening.',
  'Our new office is located on the second floor of the old library building.',
  'She bought fresh bread, cheese and apples at the market this morning.',
  'The meeting was postponed because the manager was stuck in traffic.',
  'Remember to turn off the lights and lock the door when you leave.',
  'The children played football in the park until the sun went down.',
];
