// Whisper tokens -> timed words -> sentence-like segments.
//
// Words are rebuilt from tokens: a token with a leading space starts a word, punctuation joins
// the word before it. A word ends where whisper.cpp's cross-attention alignment (DTW) moves past
// its last token (its token-timestamp end when there is no alignment); it starts after the word
// before it. Those boundaries are then snapped to the speech they cover, using the signal's 10 ms
// energy envelope: a word holds the stretches of speech between the previous word's end and its
// own, starting at the first onset and ending where that speech stops. When that span holds
// stretches separated by silence, the word ends with the stretch whose end is nearest whisper's
// token-timestamp end, and the rest is left to the next word. In continuous speech (no pause near
// a boundary) the alignment stands. Segments end after a word that ends a sentence, at a long
// pause, or when they grow too long (then at their last comma).
import type { TranscribedSegment } from '../binding.js';
import type { Segment, Word } from '../api/transcription.js';

const FRAME = 0.01; // seconds per energy frame
const SNAP = 0.35; // speech that starts or stops this close to a boundary moves the boundary there
const REACH = 0.6; // a word placed in silence starts at the next onset within this
const SLIVER = 0.15; // less speech than this at either edge of a word's span belongs to a neighbour
const PAUSE_SECONDS = 1.5; // a silence this long ends a segment
const MAX_WORDS = 40; // longer runs without a full stop are split
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*$/;

interface RawWord {
  text: string;
  start: number; // whisper's token-timestamp estimates, seconds
  end: number;
  aligned: number; // DTW time after the word's last token, or -1
}

/** Words of all whisper segments in time order, start <= end, within [0, duration]. */
export function wordsOf(segments: TranscribedSegment[], duration: number, energy?: Float32Array): Word[] {
  const raw: RawWord[] = [];
  for (const seg of segments) {
    let current: RawWord | undefined;
    for (const tok of seg.tokens) {
      if (!current || tok.text.startsWith(' ')) {
        if (!tok.text.trim()) continue;
        current = { text: tok.text, start: tok.start, end: tok.end, aligned: tok.aligned };
        raw.push(current);
      } else {
        current.text += tok.text;
        current.end = tok.end;
        current.aligned = tok.aligned;
      }
    }
  }
  const speech = energy && energy.length ? new Speech(energy) : undefined;
  const words: Word[] = [];
  let cursor = 0; // end of the previous word
  for (const w of raw) {
    const text = w.text.trim();
    if (!text) continue;
    let end = Math.max(w.aligned >= 0 ? w.aligned : w.end, cursor);
    let start = clamp(w.start, cursor, end);
    if (speech) [start, end] = speech.place(cursor, start, end, w.end);
    start = clamp(start, cursor, duration);
    end = clamp(end, start, duration);
    words.push({ word: text, start: round(start), end: round(end) });
    cursor = end;
  }
  return words;
}

interface Run {
  from: number; // seconds
  to: number;
}

/** Stretches of speech in an energy envelope: frames above a level set by the file's own range. */
class Speech {
  private readonly on: Uint8Array;

  constructor(energy: Float32Array) {
    const sorted = Float32Array.from(energy).sort();
    const floor = sorted[Math.floor(0.1 * (sorted.length - 1))]!;
    const peak = sorted[Math.floor(0.99 * (sorted.length - 1))]!;
    const level = floor + 0.05 * (peak - floor);
    this.on = Uint8Array.from(energy, (e) => (peak > floor && e > level ? 1 : 0));
    // Close dips shorter than 100 ms (stop consonants), drop blips shorter than 30 ms.
    this.fill(0, 10, 1);
    this.fill(1, 3, 0);
  }

  private fill(value: number, maxRun: number, to: number): void {
    const on = this.on;
    for (let i = 0; i < on.length;) {
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

  /** Whole stretches of speech that overlap (from, to], in order. */
  private runs(from: number, to: number): Run[] {
    const on = this.on;
    const runs: Run[] = [];
    let f = Math.max(0, Math.floor(from / FRAME));
    while (f > 0 && on[f] && on[f - 1]) f--;
    for (const last = Math.min(on.length, Math.ceil(to / FRAME)); f < last;) {
      if (!on[f]) {
        f++;
        continue;
      }
      let g = f;
      while (g < on.length && on[g]) g++;
      runs.push({ from: f * FRAME, to: g * FRAME });
      f = g;
    }
    return runs;
  }

  /**
   * Where a word lies that follows a word ending at `cursor` and that whisper puts at
   * [start, end] (end: alignment), with `stampEnd` its token-timestamp end.
   */
  place(cursor: number, start: number, end: number, stampEnd: number): [number, number] {
    const overlap = (r: Run) => Math.min(r.to, end) - Math.max(r.from, cursor);
    const runs = this.runs(cursor, end).filter((r) => overlap(r) > 0);
    while (runs.length > 1 && overlap(runs[0]!) < SLIVER && runs[0]!.from < cursor) runs.shift();
    while (runs.length > 1 && overlap(runs[runs.length - 1]!) < SLIVER) runs.pop();
    if (runs.length === 0) {
      // Whisper placed the word in silence: it starts at the next onset, if near.
      const next = this.runs(end, end + REACH)[0];
      return next && next.from >= end
        ? [next.from, Math.min(next.to, next.from + Math.max(end - start, 0))]
        : [start, end];
    }
    const first = runs[0]!;
    const last =
      runs.length === 1
        ? first
        : runs.reduce((a, b) => (Math.abs(b.to - stampEnd) < Math.abs(a.to - stampEnd) ? b : a));
    const from = first.from >= cursor - 0.05 ? Math.max(first.from, cursor) : cursor;
    const to = last.to <= end + SNAP ? last.to : end;
    return [from, Math.max(from, to)];
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
