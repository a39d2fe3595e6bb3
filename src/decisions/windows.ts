// Long texts, read in windows. Prefill is the cost of every decision (about 90 tokens/s for the
// default model on two cores), so a 20,000-character text read whole takes ~50 s. A text longer
// than WHOLE_TEXT_CHARS is cut into windows at sentence ends; the sentence encoder ranks them
// against what the request asks (statements, questions, labels, fields), and the model reads the
// best ones, in document order, up to READ_CHARS, with a gap marker between pieces; a window far
// less similar than a query's best is not read for that query (unrelated text misleads the model
// more than it helps). A whole-text
// decision (classify, rate) reads evenly spaced windows instead: a sample of the whole. Nothing is
// dropped silently: docs/capabilities.md states this policy, and offsets always refer to the
// original text.
import type { Engine, Session } from '../engine/engine.js';
import { dot } from '../engine/vectors.js';

/** Texts up to this many characters are read whole. */
export const WHOLE_TEXT_CHARS = 2000;
/** What the model reads of a longer text, in characters (the gap markers aside). */
export const READ_CHARS = 1600;
const WINDOW_CHARS = 400;
/** A window is read for a query when its cosine similarity is within this of the query's best. */
const RELEVANCE_MARGIN = 0.1;
const GAP = '\n[…]\n';

/** The part of a text the model reads, and where each piece came from. */
export class Excerpt {
  readonly text: string;
  private readonly pieces: { at: number; from: number; length: number }[] = []; // excerpt offset, original offset

  constructor(
    readonly original: string,
    ranges: [number, number][],
  ) {
    let text = '';
    for (const [from, to] of ranges) {
      if (text !== '') text += GAP;
      this.pieces.push({ at: text.length, from, length: to - from });
      text += original.slice(from, to);
    }
    this.text = text;
  }

  static whole(text: string): Excerpt {
    return new Excerpt(text, [[0, text.length]]);
  }

  get windowed(): boolean {
    return this.text.length !== this.original.length;
  }

  /** The original offsets of excerpt range [start, end); null when it is not inside one piece. */
  toOriginal(start: number, end: number): [number, number] | null {
    for (const p of this.pieces) {
      if (start >= p.at && end <= p.at + p.length) return [p.from + start - p.at, p.from + end - p.at];
    }
    return null;
  }
}

/** Picks what the model reads of each text; short texts, or no encoder, mean the whole text. */
export class Reader {
  constructor(private readonly engine: Engine) {}

  /**
   * The windows most similar to any of `queries`, taking each query's best in turn (those near its
   * best), embedded in the request's `session`.
   */
  async focus(session: Session, text: string, queries: string[]): Promise<Excerpt> {
    if (text.length <= WHOLE_TEXT_CHARS || !this.engine.canEmbed || queries.length === 0) return Excerpt.whole(text);
    const windows = windowsOf(text);
    const vectors = await session.embed([...queries, ...windows.map(([from, to]) => text.slice(from, to))]);
    const queryVectors = vectors.slice(0, queries.length);
    const rankings = queryVectors.map((q) => {
      const similarity = windows.map((_, w) => dot(q, vectors[queries.length + w]!));
      const order = windows.map((_, w) => w).sort((a, b) => similarity[b]! - similarity[a]!);
      return order.filter((w) => similarity[w]! >= similarity[order[0]!]! - RELEVANCE_MARGIN);
    });
    const chosen = new Set<number>();
    let budget = READ_CHARS;
    for (let rank = 0; budget > 0 && rank < windows.length; rank++) {
      for (const ranking of rankings) {
        const w = ranking[rank];
        if (w === undefined || chosen.has(w)) continue;
        const [from, to] = windows[w]!;
        if (to - from > budget && chosen.size > 0) continue;
        chosen.add(w);
        budget -= to - from;
        if (budget <= 0) break;
      }
    }
    return new Excerpt(text, merged([...chosen].sort((a, b) => a - b).map((w) => windows[w]!)));
  }

  /** Evenly spaced windows from start to end: what a decision about the whole text reads. */
  sample(text: string): Excerpt {
    if (text.length <= WHOLE_TEXT_CHARS || !this.engine.canEmbed) return Excerpt.whole(text);
    const windows = windowsOf(text);
    const count = Math.max(1, Math.floor(READ_CHARS / WINDOW_CHARS));
    const picks = new Set(
      Array.from({ length: count }, (_, i) => Math.round((i * (windows.length - 1)) / Math.max(1, count - 1))),
    );
    return new Excerpt(text, merged([...picks].sort((a, b) => a - b).map((w) => windows[w]!)));
  }
}

/**
 * Consecutive windows of about WINDOW_CHARS covering the text, each ending at a sentence end or a space when one is
 * near.
 */
export function windowsOf(text: string): [number, number][] {
  const out: [number, number][] = [];
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + WINDOW_CHARS);
    if (to < text.length) {
      const slice = text.slice(from + WINDOW_CHARS / 2, to);
      const sentence = Math.max(
        slice.lastIndexOf('. '),
        slice.lastIndexOf('! '),
        slice.lastIndexOf('? '),
        slice.lastIndexOf('\n'),
      );
      const space = slice.lastIndexOf(' ');
      const cut = sentence >= 0 ? sentence + 1 : space;
      if (cut >= 0) to = from + WINDOW_CHARS / 2 + cut + 1;
      else if (/[\uD800-\uDBFF]/.test(text.charAt(to - 1))) to--; // never split a surrogate pair
    }
    out.push([from, to]);
    from = to;
  }
  return out;
}

function merged(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of ranges) {
    const last = out.at(-1);
    if (last && last[1] === from) last[1] = to;
    else out.push([from, to]);
  }
  return out;
}
