// Multi-speaker test audio made at test time: espeak-ng turns in different voices joined with
// known gaps, resampled by sox to 16 kHz mono float. Each turn's speaker is known exactly; word
// times inside a turn are spread over its voiced span by letter count (close, not exact), so
// every word's true speaker is known. espeak-ng and sox are installed when missing (as root).
import { execFileSync } from 'node:child_process';

export interface Turn {
  /**
   * espeak-ng voice, e.g. 'en-us+m3'. British variants are 'en+m7', not 'en-gb+m7': espeak-ng
   * 1.51 (Debian 12) ignores a variant after 'en-gb' and speaks plain en-gb.
   */
  voice: string;
  text: string;
}

export interface SpokenWord {
  word: string;
  start: number; // seconds
  end: number;
  speaker: number; // index into Conversation.voices
}

export interface Conversation {
  pcm: Float32Array; // 16 kHz mono
  words: SpokenWord[];
  voices: string[]; // distinct voices in order of first turn
}

const RATE = 16000;

/** espeak-ng and sox (with ffmpeg), installed from Debian when missing: the audio tests' installer. */
export { ensureAudioTools as ensureSpeechTools } from '../audio/speech.js';

/** `text` spoken by espeak-ng in `voice`, as 16 kHz mono float samples. */
export function speak16k(text: string, voice: string, wordsPerMinute = 165): Float32Array {
  const wav = execFileSync('espeak-ng', ['-v', voice, '-s', String(wordsPerMinute), '--stdout', text], { maxBuffer: 1 << 28 });
  const raw = execFileSync('sox', ['-t', 'wav', '-', '-t', 'raw', '-r', String(RATE), '-c', '1', '-e', 'floating-point', '-b', '32', '-L', '-'], {
    input: wav,
    maxBuffer: 1 << 28,
  });
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

/** A small deterministic generator (mulberry32) so gaps are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Joins the turns, each trimmed to its voiced span, with silences drawn from [minGap, maxGap]
 * seconds (and half a second of silence at both ends).
 */
export function conversation(turns: readonly Turn[], opts: { minGap?: number; maxGap?: number; seed?: number } = {}): Conversation {
  const { minGap = 0.2, maxGap = 0.7, seed = 1 } = opts;
  const random = seeded(seed);
  const voices: string[] = [];
  const pieces: Float32Array[] = [new Float32Array(RATE / 2)];
  const words: SpokenWord[] = [];
  let at = RATE / 2; // samples so far
  turns.forEach((turn, i) => {
    if (!voices.includes(turn.voice)) voices.push(turn.voice);
    const speech = speak16k(turn.text, turn.voice);
    const [from, to] = voicedSpan(speech);
    const voiced = speech.subarray(from, to);
    const tokens = turn.text.split(/\s+/).filter(Boolean);
    const letters = tokens.map((t) => t.replace(/[^\p{L}\p{N}]/gu, '').length + 1);
    const total = letters.reduce((a, b) => a + b, 0);
    let offset = 0;
    tokens.forEach((word, k) => {
      const start = (at + (offset / total) * voiced.length) / RATE;
      offset += letters[k];
      const end = (at + (offset / total) * voiced.length) / RATE;
      words.push({ word, start, end, speaker: voices.indexOf(turn.voice) });
    });
    pieces.push(voiced);
    at += voiced.length;
    const gap = Math.round((i === turns.length - 1 ? 0.5 : minGap + (maxGap - minGap) * random()) * RATE);
    pieces.push(new Float32Array(gap));
    at += gap;
  });
  const pcm = new Float32Array(at);
  let offset = 0;
  for (const p of pieces) {
    pcm.set(p, offset);
    offset += p.length;
  }
  return { pcm, words, voices };
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
export function scripted(voices: readonly string[], pattern: readonly number[], opts: { seed?: number; minGap?: number; maxGap?: number } = {}): Conversation {
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
