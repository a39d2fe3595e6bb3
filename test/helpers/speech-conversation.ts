// Multi-speaker test audio made at test time: espeak-ng turns in different voices joined with
// known gaps, resampled by sox to 16 kHz mono float. Each turn's speaker is known exactly; word
// times inside a turn are spread over its voiced span by letter count (close, not exact), so
// every word's true speaker is known. espeak-ng and sox are installed when missing (as root).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { fetched, recordedSpeech } from '../audio/recorded.js';
import { uniform } from '../../src/heads/random.js';

export interface Turn {
  /**
   * espeak-ng voice, e.g. 'en-us+m3'. British variants are 'en+m7', not 'en-gb+m7': espeak-ng
   * 1.51 (Debian 12) ignores a variant after 'en-gb' and speaks plain en-gb.
   */
  voice: string;
  text: string;
  /** espeak-ng pitch 0-99 (its default is 50); a voice at another pitch is another speaker. */
  pitch?: number;
}

export interface SpokenWord {
  word: string;
  start: number; // seconds
  end: number;
  speaker: number; // index into Conversation.voices
}

export interface Conversation {
  pcm: Float32Array; // 16 kHz mono
  words: SpokenWord[]; // empty for recorded speech, whose word times are not known
  voices: string[]; // distinct voices in order of first turn
  turns: { start: number; end: number; speaker: number }[]; // seconds; speaker indexes voices
}

const RATE = 16000;

/** espeak-ng and sox (with ffmpeg), installed from Debian when missing: the audio tests' installer. */
export { ensureAudioTools as ensureSpeechTools } from '../audio/speech.js';

/** `text` spoken by espeak-ng in `voice` (at `pitch`, 0-99), as 16 kHz mono float samples. */
export function speak16k(text: string, voice: string, wordsPerMinute = 165, pitch?: number): Float32Array {
  const args = [
    '-v',
    voice,
    '-s',
    String(wordsPerMinute),
    ...(pitch === undefined ? [] : ['-p', String(pitch)]),
    '--stdout',
    text,
  ];
  const wav = execFileSync('espeak-ng', args, { maxBuffer: 1 << 28 });
  const raw = execFileSync(
    'sox',
    ['-t', 'wav', '-', '-t', 'raw', '-r', String(RATE), '-c', '1', '-e', 'floating-point', '-b', '32', '-L', '-'],
    {
      input: wav,
      maxBuffer: 1 << 28,
    },
  );
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length - (raw.length % 4)));
}

/** First and last sample of the voiced part: 10 ms frames above -45 dBFS RMS. */
function voicedSpan(pcm: Float32Array): [number, number] {
  const frame = RATE / 100;
  const loud: number[] = [];
  for (let f = 0; f * frame < pcm.length; f++) {
    let sum = 0;
    const end = Math.min(pcm.length, (f + 1) * frame);
    for (let i = f * frame; i < end; i++) sum += pcm[i] * pcm[i];
    if (sum / (end - f * frame) > 10 ** (-45 / 10)) loud.push(f);
  }
  if (loud.length === 0) return [0, pcm.length];
  return [loud[0] * frame, Math.min(pcm.length, (loud[loud.length - 1] + 1) * frame)];
}

/** A small deterministic generator (mulberry32, draws in [0, 1)) so gaps are the same on every run. */
export const seeded = uniform;

/** A turn's speaker name: its voice, and its pitch when set. */
export function voiceName(turn: Turn): string {
  return turn.pitch === undefined ? turn.voice : `${turn.voice} p${turn.pitch}`;
}

/** The voiced part of `text` spoken in the turn's voice, 16 kHz. */
export function spoken(turn: Turn): Float32Array {
  const speech = speak16k(turn.text, turn.voice, 165, turn.pitch);
  const [from, to] = voicedSpan(speech);
  return speech.subarray(from, to);
}

/**
 * Joins the turns, each trimmed to its voiced span, with silences drawn from [minGap, maxGap]
 * seconds (and half a second of silence at both ends).
 */
export function conversation(
  turns: readonly Turn[],
  opts: { minGap?: number; maxGap?: number; seed?: number } = {},
): Conversation {
  return withWords(
    joined(
      turns.map((turn) => ({ speaker: voiceName(turn), pcm: spoken(turn) })),
      opts,
    ),
    turns.map((t) => t.text),
  );
}

/** `c` with the words of each turn's text spread over the turn by letter count. */
export function withWords(c: Conversation, texts: readonly string[]): Conversation {
  const words: SpokenWord[] = [];
  texts.forEach((text, i) => {
    const { start, end, speaker } = c.turns[i];
    const tokens = text.split(/\s+/).filter(Boolean);
    const letters = tokens.map((t) => t.replace(/[^\p{L}\p{N}]/gu, '').length + 1);
    const total = letters.reduce((a, b) => a + b, 0);
    let offset = 0;
    tokens.forEach((word, k) => {
      const from = start + (offset / total) * (end - start);
      offset += letters[k];
      words.push({ word, start: from, end: start + (offset / total) * (end - start), speaker });
    });
  });
  return { ...c, words };
}

/**
 * Joins recorded pieces of speech, one turn each, with silences drawn from [minGap, maxGap]
 * seconds (and half a second of silence at both ends). Words are left empty: only the turns'
 * times and speakers are known.
 */
export function joined(
  pieces: readonly { speaker: string; pcm: Float32Array }[],
  opts: { minGap?: number; maxGap?: number; seed?: number } = {},
): Conversation {
  const { minGap = 0.2, maxGap = 0.7, seed = 1 } = opts;
  const random = seeded(seed);
  const voices: string[] = [];
  const turns: Conversation['turns'] = [];
  const gaps = pieces.map((_, i) =>
    Math.round((i === pieces.length - 1 ? 0.5 : minGap + (maxGap - minGap) * random()) * RATE),
  );
  const pcm = new Float32Array(RATE / 2 + pieces.reduce((n, p, i) => n + p.pcm.length + gaps[i], 0));
  let at = RATE / 2;
  pieces.forEach((piece, i) => {
    if (!voices.includes(piece.speaker)) voices.push(piece.speaker);
    pcm.set(piece.pcm, at);
    turns.push({ start: at / RATE, end: (at + piece.pcm.length) / RATE, speaker: voices.indexOf(piece.speaker) });
    at += piece.pcm.length + gaps[i];
  });
  return { pcm, words: [], voices, turns };
}

/** The true speaker at time `at`: the turn holding it, else the nearest turn. */
export function speakerAt(c: Conversation, at: number): number {
  let best = c.turns[0];
  let distance = Infinity;
  for (const t of c.turns) {
    const d = at < t.start ? t.start - at : at > t.end ? at - t.end : 0;
    if (d < distance) [best, distance] = [t, d];
  }
  return best.speaker;
}

/** Lines for scripted conversations: plain sentences of varied length. */
export const LINES = [
  'Good morning, did you get a chance to read the proposal I sent over last night?',
  'I did, and I think the budget section needs another look before we share it.',
  'Fair enough. Which numbers worried you the most?',
  'Mostly the travel costs. They doubled compared to last year without any explanation.',
  'That is because the team is twice as large now, but I agree we should say so.',
  'Could we also add a short summary at the top for people who only read the first page?',
  'Yes, I can write that this afternoon.',
  'Great. Then let us meet again on Thursday and go through the final version together.',
  'Before that, somebody should check the schedule with the building manager.',
  'I will call him after lunch and ask whether the large room is free.',
  'Thanks. And please remind everyone that the deadline moved to the end of the month.',
  'Will do. Is there anything else we need to decide today?',
  'Only who presents the results to the board next week.',
  'I am happy to do it if someone helps me with the slides.',
];

/** A conversation whose turns' speakers follow `pattern` (indices into `voices`). */
export function scripted(
  voices: readonly string[],
  pattern: readonly number[],
  opts: { seed?: number; minGap?: number; maxGap?: number } = {},
): Conversation {
  const turns = pattern.map((v, i) => ({ voice: voices[v], text: LINES[i % LINES.length] }));
  return conversation(turns, opts);
}

/** Share of words given their true speaker after the best one-to-one matching of labels. */
export function matchedAccuracy(truth: readonly number[], predicted: readonly number[]): number {
  const t = Math.max(...truth) + 1;
  const p = Math.max(...predicted) + 1;
  const counts = Array.from({ length: p }, () => new Array<number>(t).fill(0));
  truth.forEach((s, i) => counts[predicted[i]][s]++);
  // best[mask]: most words matched with the true speakers in `mask` taken, over the labels so far.
  let best = new Array<number>(1 << t).fill(-1);
  best[0] = 0;
  for (const row of counts) {
    const next = [...best];
    best.forEach((sum, mask) => {
      if (sum < 0) return;
      for (let c = 0; c < t; c++) {
        if (mask & (1 << c)) continue;
        next[mask | (1 << c)] = Math.max(next[mask | (1 << c)], sum + row[c]);
      }
    });
    best = next;
  }
  return Math.max(...best) / truth.length;
}

/** Any audio file as 16 kHz mono float samples (ffmpeg). */
export function pcm16k(audio: Buffer): Float32Array {
  const raw = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-i', 'pipe:0', '-f', 'f32le', '-ac', '1', '-ar', String(RATE), 'pipe:1'],
    { input: audio, maxBuffer: 1 << 28 },
  );
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length - (raw.length % 4)));
}

/**
 * Cuts [from, to) seconds of `pcm` into pieces of `min`..`max` seconds, each cut at the quietest
 * 10 ms frame that keeps both sides long enough; a stretch shorter than `min` is dropped.
 */
export function piecesOf(pcm: Float32Array, from: number, to: number, min = 2, max = 5): Float32Array[] {
  if (to - from < min) return [];
  if (to - from <= max) return [pcm.subarray(Math.round(from * RATE), Math.round(to * RATE))];
  const frame = RATE / 100;
  let cut = from + min;
  let quietest = Infinity;
  for (let at = from + min; at <= Math.min(from + max, to - min); at += 0.01) {
    let sum = 0;
    const first = Math.round(at * RATE);
    for (let i = first; i < first + frame; i++) sum += pcm[i] * pcm[i];
    if (sum < quietest) [cut, quietest] = [at, sum];
  }
  return [...piecesOf(pcm, from, cut, min, max), ...piecesOf(pcm, cut, to, min, max)];
}

const PYANNOTE = {
  spec: 'pyannote-audio==4.0.7',
  file: 'pyannote_audio-4.0.7-py3-none-any.whl',
  sha256: '852ea15c4d85bc34773e618267603ffca6a521669a74d33742692cc67fc700d6',
};

/**
 * pyannote.audio's sample (MIT, shipped in its wheel): 30 s of a real telephone call between two
 * women, with the reference diarization (RTTM) its tests use. Turns overlap in places.
 */
export function telephoneCall(): { pcm: Float32Array; turns: { start: number; end: number; speaker: string }[] } {
  const dir = join(loadConfig().cacheDir, '..', 'test-audio');
  mkdirSync(dir, { recursive: true });
  const wheel = fetched(dir, PYANNOTE, (spec, into) =>
    execFileSync(
      'python3',
      ['-m', 'pip', 'download', '--no-deps', '--quiet', '--only-binary', ':all:', '-d', into, spec],
      { stdio: 'ignore' },
    ),
  );
  const member = (name: string) =>
    execFileSync('unzip', ['-p', wheel, `pyannote/audio/sample/${name}`], { maxBuffer: 1 << 24 });
  const turns = member('sample.rttm')
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[0] === 'SPEAKER')
    .map((f) => ({ start: Number(f[3]), end: Number(f[3]) + Number(f[4]), speaker: f[7] }));
  return { pcm: pcm16k(member('sample.wav')), turns };
}

/**
 * Real speakers, each as pieces of 2-5 s of their own speech: the LibriVox reader and J. F.
 * Kennedy of test/audio/recorded.ts, and the two callers of telephoneCall() (stretches where
 * only one of them speaks).
 */
export function recordedVoices(): { speaker: string; pieces: Float32Array[] }[] {
  const recordings = recordedSpeech();
  const librivox = recordings
    .filter((r) => r.name.startsWith('librivox'))
    .flatMap((r) => {
      const pcm = pcm16k(r.audio);
      return piecesOf(pcm, 0, pcm.length / RATE);
    });
  const jfkPcm = pcm16k(recordings.find((r) => r.name === 'jfk')!.audio);
  const call = telephoneCall();
  const callers = [...new Set(call.turns.map((t) => t.speaker))].map((speaker) => {
    const own = call.turns.filter((t) => t.speaker === speaker);
    const others = call.turns.filter((t) => t.speaker !== speaker);
    // Each own turn minus every other speaker's turn.
    const alone = own.flatMap((t) =>
      others.reduce<{ start: number; end: number }[]>(
        (spans, o) =>
          spans.flatMap((s) =>
            o.end <= s.start || o.start >= s.end
              ? [s]
              : [
                  { start: s.start, end: o.start },
                  { start: o.end, end: s.end },
                ].filter((p) => p.end > p.start),
          ),
        [{ start: t.start, end: t.end }],
      ),
    );
    return { speaker: `call ${speaker}`, pieces: alone.flatMap((s) => piecesOf(call.pcm, s.start, s.end)) };
  });
  return [
    { speaker: 'librivox reader', pieces: librivox },
    { speaker: 'jfk', pieces: piecesOf(jfkPcm, 0, jfkPcm.length / RATE) },
    ...callers,
  ];
}
