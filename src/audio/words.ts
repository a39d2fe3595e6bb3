// Whisper tokens -> timed words -> sentence-like segments.
//
// Words are rebuilt from tokens: a token with a leading space starts a word, punctuation joins
// the word before it. Their times start from whisper.cpp's token timestamps and are then snapped
// to the speech they cover, using the signal's 10 ms energy envelope: a word starts at the onset
// of speech at or after the previous word's end, and ends where that stretch of speech stops, when
// these are near whisper's estimate. In continuous speech (no pause near a boundary) whisper's
// estimate stands. Segments end after a word that ends a sentence, at a long pause, or when they
// grow too long (then at their last comma).
import type { TranscribedSegment } from '../binding.js';

export interface Word {
  word: string;
  start: number;
  end: number;
}

export interface Segment {
  start: number;
  end: number;
  text: string;
  words: Word[];
}

const FRAME = 0.01; // seconds per energy frame
const SNAP = 0.35; // a speech onset this close to whisper's word start is the word's start
const REACH = 0.6; // from silence, the next onset within this is the word's start
const PAUSE_SECONDS = 1.5; // a silence this long ends a segment
const MAX_WORDS = 40; // longer runs without a full stop are split
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*$/;

interface RawWord {
  text: string;
  start: number; // whisper's estimate, seconds
  end: number;
}

/** Words of all whisper segments in time order, start <= end, within [0, duration]. */
export function wordsOf(segments: TranscribedSegment[], duration: number, energy?: Float32Array): Word[] {
  const raw: RawWord[] = [];
  for (const seg of segments) {
    let current: RawWord | undefined;
    for (const tok of seg.tokens) {
      if (!current || tok.text.startsWith(' ')) {
        if (!tok.text.trim()) continue;
        current = { text: tok.text, start: tok.start, end: tok.end };
        raw.push(current);
      } else {
        current.text += tok.text;
        current.end = tok.end;
      }
    }
  }
  const speech = energy && energy.length ? new Speech(energy) : undefined;
  const words: Word[] = [];
  let cursor = 0; // end of the previous word
  for (const w of raw) {
    const text = w.text.trim();
    if (!text) continue;
    let start = Math.max(w.start, cursor);
    let end = Math.max(w.end, start);
    if (speech) {
      start = speech.startNear(start, cursor);
      end = speech.endNear(start, Math.max(end, start));
    }
    start = clamp(start, cursor, duration);
    end = clamp(end, start, duration);
    words.push({ word: text, start: round(start), end: round(end) });
    cursor = end;
  }
  return words;
}

/** Stretches of speech in an energy envelope: frames above a level set by the file's own range. */
class Speech {
  private readonly on: Uint8Array;

  constructor(energy: Float32Array) {
    const sorted = Float32Array.from(energy).sort();
    const floor = sorted[Math.floor(0.1 * (sorted.length - 1))];
    const peak = sorted[Math.floor(0.99 * (sorted.length - 1))];
    const level = floor + 0.05 * (peak - floor);
    this.on = Uint8Array.from(energy, (e) => (peak > floor && e > level ? 1 : 0));
    // Close dips shorter than 100 ms (stop consonants), drop blips shorter than 30 ms.
    this.fill(0, 10, 1);
    this.fill(1, 3, 0);
  }

  private fill(value: number, maxRun: number, to: number): void {
    const on = this.on;
    for (let i = 0; i < on.length; ) {
      if (on[i] !== value) {
        i++;
        continue;
      }
      let j = i;
      while (j < on.length && on[j] === value) j++;
      if (j - i < maxRun && i > 0 && j < on.length) on.fill(to, i, j);
      i = j;
    }
  }

  private at(t: number): boolean {
    return this.on[Math.min(this.on.length - 1, Math.max(0, Math.floor(t / FRAME)))] === 1;
  }

  /** A word whisper starts at `t` (not before `cursor`): the onset of the speech it falls in or before. */
  startNear(t: number, cursor: number): number {
    let f = Math.floor(t / FRAME);
    if (!this.at(t)) {
      while (f < this.on.length && !this.on[f] && (f + 1) * FRAME - t <= REACH) f++;
      return f < this.on.length && this.on[f] ? f * FRAME : t;
    }
    while (f > 0 && this.on[f - 1]) f--;
    const onset = f * FRAME;
    return onset >= cursor - 0.05 && t - onset <= SNAP ? Math.max(onset, cursor) : t;
  }

  /** A word starting at `start` that whisper ends at `t`: where its stretch of speech stops, if near. */
  endNear(start: number, t: number): number {
    let f = Math.floor(start / FRAME);
    while (f < this.on.length && this.on[f]) f++;
    const offset = f * FRAME;
    return offset > start && offset <= t + 0.5 ? offset : t;
  }
}

/** Groups words into sentence-like segments. */
export function sentencesOf(words: Word[]): Segment[] {
  const groups: Word[][] = [];
  let current: Word[] = [];
  const close = () => {
    if (current.length) groups.push(current);
    current = [];
  };
  for (const [i, w] of words.entries()) {
    const next = words[i + 1];
    current.push(w);
    if (SENTENCE_END.test(w.word) || (next && next.start - w.end >= PAUSE_SECONDS)) close();
    else if (current.length >= MAX_WORDS) {
      const comma = current.map((x) => x.word).findLastIndex((t) => /[,;:]$/.test(t));
      const rest = comma > 0 ? current.splice(comma + 1) : [];
      close();
      current = rest;
    }
  }
  close();
  return groups.map((g) => ({
    start: g[0].start,
    end: g[g.length - 1].end,
    text: g.map((w) => w.word).join(' '),
    words: g,
  }));
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), Math.max(lo, hi));
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
