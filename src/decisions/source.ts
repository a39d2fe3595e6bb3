// A text as the span kernel copies from it: the tokens of what the model reads (the whole text, or
// an excerpt of a long one) and the character offset of each token, so a span of tokens becomes
// exact `start` / `end` offsets into the original string.
import type { SpanJob } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { ERRORS } from '../errors.js';
import type { Excerpt } from './windows.js';

const MIN_JOIN_LOGPROB = Math.log(0.1);
// A word taken whole as a start form: the token that begins it (letters or digits, perhaps after
// a space, not run into from the token before) and the tokens of letters or digits that follow it,
// at most this many more.
const WORD_START = /^\s?[\p{L}\p{N}]+$/u;
const WORD_PART = /^[\p{L}\p{N}]+$/u;
const MAX_WORD_TOKENS = 8;

// Trimmed from both ends of a copied span: a span is the words, not the spaces or punctuation
// the model may carry along.
const EDGE = /^[\s.,;:!?"'()[\]{}]+|[\s.,;:!?"'()[\]{}]+$/g;
// An abbreviation of single letters keeps its last period ("Sp. z o.o.", "SELANGOR D.E."): it is
// part of the word, where a period after any other word ends the sentence.
const ABBREVIATION = /(?<!\p{L})\p{L}(?:\.\p{L})+$/u;

export interface TextSpan {
  text: string;
  start: number; // UTF-16 offset into the text, as JavaScript's String.prototype.slice counts
  end: number; // exclusive: end - start === text.length
}

export class Source {
  readonly tokens: Int32Array;
  /** Other forms a span may begin with (see constructor), as SpanJob takes them. */
  readonly startTokens: Int32Array;
  readonly startLengths: Int32Array;
  readonly startPositions: Int32Array;
  readonly startEnds: Int32Array;
  /** Per token: 1 where a span ending on it should take the next token too (see joins). */
  readonly joinNext: Int32Array;
  private readonly offsets: number[]; // UTF-16 offset at the start of each token, plus the end

  /** What the model reads. */
  readonly text: string;

  constructor(
    private readonly engine: Engine,
    private readonly excerpt: Excerpt,
  ) {
    const text = (this.text = excerpt.text);
    this.tokens = engine.tokenize(text);
    const bytes = engine.tokenBytes(this.tokens);
    const byteToChar = byteOffsets(text);
    this.offsets = [0];
    let at = 0;
    for (const n of bytes) {
      at += n;
      this.offsets.push(byteToChar[Math.min(at, byteToChar.length - 1)]!);
    }
    if (at !== byteToChar.length - 1) {
      throw ERRORS.tokenizerMismatch();
    }
    // How an answer may begin a span that the text tokenized otherwise: without or with the
    // leading space, or capitalised ("Dentist appointment" for "... a dentist appointment"). A
    // form may take several tokens: " Valencia" is one, but the answer's first word "Valencia"
    // is "Val" + "encia", and the model writes it so. A word of several tokens is also taken
    // whole: " amlodipine" is " a" "ml" "od" "ip" "ine" in the text, but "aml" "od" "ip" "ine" as
    // the first word of a list item, which no form of " a" begins.
    const forms = new Map<string, Int32Array[]>();
    const tokens: number[] = [];
    const lengths: number[] = [];
    const positions: number[] = [];
    const ends: number[] = [];
    const add = (from: number, to: number) => {
      const word = this.text.slice(this.offsets[from], this.offsets[to + 1]).replace(/^\s/, '');
      let found = forms.get(word);
      if (found === undefined) {
        const own = this.tokens.subarray(from, to + 1);
        const capital = word.charAt(0).toUpperCase() + word.slice(1);
        found = [...new Set([word, ` ${word}`, capital, ` ${capital}`])]
          .map((f) => engine.tokenize(f))
          .filter((t) => t.length > 0 && !sameTokens(t, own));
        forms.set(word, found);
      }
      for (const form of found) {
        tokens.push(...form);
        lengths.push(form.length);
        positions.push(from);
        ends.push(to);
      }
    };
    for (let i = 0; i < this.tokens.length; i++) {
      add(i, i);
      if (!this.beginsWord(i)) continue;
      let last = i;
      while (last + 1 < this.tokens.length && last - i < MAX_WORD_TOKENS && WORD_PART.test(this.piece(last + 1)))
        last++;
      if (last > i) add(i, last);
    }
    this.startTokens = Int32Array.from(tokens);
    this.startLengths = Int32Array.from(lengths);
    this.startPositions = Int32Array.from(positions);
    this.startEnds = Int32Array.from(ends);
    this.joinNext = joins(this.tokens.length, (i) => this.piece(i));
  }

  /** Per token: 1 where it holds one of the UTF-16 offsets `at` (a span beginning there begins those characters). */
  tokensAt(at: number[]): Int32Array {
    const mask = new Int32Array(this.tokens.length);
    for (const offset of at) {
      let lo = 0;
      let hi = this.tokens.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.offsets[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      mask[lo] = 1;
    }
    return mask;
  }

  /** Token i is letters or digits (after a space, perhaps), not run into from a letter or digit before it. */
  private beginsWord(i: number): boolean {
    return (
      WORD_START.test(this.piece(i)) &&
      (/^\s/.test(this.piece(i)) || i === 0 || !/[\p{L}\p{N}]$/u.test(this.piece(i - 1)))
    );
  }

  /** The text of token i. */
  private piece(i: number): string {
    return this.text.slice(this.offsets[i], this.offsets[i + 1]);
  }

  /**
   * Per token: the model's one token for it followed by a line break, or -1. A list puts a line
   * break after each span, and the model writes some endings together with it: "12%" then a line
   * break is "1", "2", "%\n", where the text has "1", "2", "%", " to". A token that ends its line
   * in the text (")\n") is its own: a list item ends with its line.
   */
  private closingTokens(): Int32Array {
    const known = lineBreaks(this.engine);
    return this.tokens.map((token, i) => {
      let merged = known.closing.get(token);
      if (merged === undefined) {
        const piece = this.piece(i);
        const written = piece.endsWith('\n') ? [token] : this.engine.tokenize(`${piece}\n`);
        merged = written.length === 1 ? written[0]! : -1;
        known.closing.set(token, merged);
      }
      return merged;
    });
  }

  /** A span job that copies from this text; the model's end-of-reply tokens stop it. */
  job(
    prefix: Int32Array,
    branches: Int32Array[],
    how: Pick<
      SpanJob,
      | 'none'
      | 'separator'
      | 'inlineSeparator'
      | 'maxSpanTokens'
      | 'maxSpans'
      | 'minListLogprob'
      | 'forkWithin'
      | 'firstOptions'
      | 'scoredBranches'
      | 'branchMaxSpans'
      | 'branchMaxSpanTokens'
      | 'branchStarts'
    >,
  ): SpanJob {
    return {
      prefix,
      branches,
      source: this.tokens,
      startTokens: this.startTokens,
      startLengths: this.startLengths,
      startPositions: this.startPositions,
      startEnds: this.startEnds,
      stops: this.engine.stopTokens,
      joinNext: this.joinNext,
      minJoinLogprob: MIN_JOIN_LOGPROB,
      ...(how.separator === lineBreaks(this.engine).newline ? { closingTokens: this.closingTokens() } : {}),
      ...how,
    };
  }

  /**
   * The text of tokens [start, end), trimmed of surrounding spaces and punctuation (but see
   * ABBREVIATION) and of a bracket left open, with offsets into the original text; null if
   * nothing is left or the span crosses a gap between windows.
   */
  span(start: number, end: number): TextSpan | null {
    const from = this.offsets[start]!;
    const raw = this.text.slice(from, this.offsets[end]!);
    const lead = raw.length - raw.replace(/^[\s.,;:!?"'()[\]{}]+/, '').length;
    const trimmed = closed(raw.replace(EDGE, ''));
    const text = ABBREVIATION.test(trimmed) && raw.startsWith(`${trimmed}.`, lead) ? `${trimmed}.` : trimmed;
    if (text === '') return null;
    const at = this.excerpt.toOriginal(from + lead, from + lead + text.length);
    return at && { text, start: at[0], end: at[1] };
  }
}

/** A value does not end inside a bracket it opened: "Amara Nwosu (Finance" is "Amara Nwosu". */
function closed(text: string): string {
  const open = text.lastIndexOf('(');
  return open > 0 && !text.includes(')', open) ? text.slice(0, open).replace(EDGE, '') : text;
}

// Per engine, kept across requests (a token's text never changes): the line-break token, and for
// each token id met so far its closing token (see Source.closingTokens).
const engineLineBreaks = new WeakMap<Engine, { newline: number; closing: Map<number, number> }>();

function lineBreaks(engine: Engine): { newline: number; closing: Map<number, number> } {
  let known = engineLineBreaks.get(engine);
  if (!known) engineLineBreaks.set(engine, (known = { newline: engine.tokenize('\n')[0]!, closing: new Map() }));
  return known;
}

// A number and the word or number after it are one value ("1000 mg", "KM19 XTB", "+44 20 7946"): where a
// token ends in a digit and the next is a space and a letter or digit, a span goes on if the model
// finds that plausible; the model alone ended "1000 mg" and "KM19 XTB" after the digits (measured:
// docs/performance.md, "Where the decision code's constants come from").
function joins(n: number, piece: (i: number) => string): Int32Array {
  return Int32Array.from({ length: n }, (_, i) =>
    i + 1 < n && /\d$/.test(piece(i)) && /^ [\p{L}\p{N}]/u.test(piece(i + 1)) ? 1 : 0,
  );
}

function sameTokens(a: Int32Array, b: Int32Array): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

// UTF-16 offset for every UTF-8 byte offset of `text` (a byte inside a character maps to the
// character's end, so a token boundary inside a character never cuts it).
function byteOffsets(text: string): number[] {
  const out: number[] = [];
  let utf16 = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    out.push(utf16);
    utf16 += ch.length;
    for (let i = 1; i < bytes; i++) out.push(utf16);
  }
  out.push(utf16);
  return out;
}
