// Builds chat prompts as token arrays in two parts: a prefix shared by every branch of a job
// (instructions + the text) and one branch per statement / question. Template markers are parsed
// as special tokens; user text never is, so a text containing "<|im_end|>" stays plain text.
import type { Engine } from '../engine/engine.js';

const HEAD = '\u0001';
const TAIL = '\u0002';

export class Prompt {
  private readonly open: Int32Array; // template up to the user turn's content
  private readonly close: Int32Array; // end of the user turn + start of the assistant turn

  constructor(
    private readonly engine: Engine,
    system: string,
  ) {
    const rendered = engine.chat(
      [
        { role: 'system', content: system },
        { role: 'user', content: HEAD + TAIL },
      ],
      true,
    );
    const [open, rest] = rendered.split(HEAD);
    const [between, close] = (rest ?? '').split(TAIL);
    if (open === undefined || close === undefined || between !== '') {
      throw new Error('the model chat template could not be split around the user content');
    }
    this.open = engine.tokenize(open, true, true);
    this.close = engine.tokenize(close, true, false);
  }

  /** Instructions and the user content shared by all branches. */
  prefix(userHead: string): Int32Array {
    return concat(this.open, this.engine.tokenize(userHead));
  }

  /** One branch: the rest of the user turn, then the assistant turn's opening. */
  branch(userTail: string): Int32Array {
    return concat(this.engine.tokenize(userTail), this.close);
  }

  /** The token that ends a turn (the first of the close of the user's): how a reply ends. */
  endOfTurn(): Int32Array {
    return this.close.subarray(0, 1);
  }

  /** Answer options as the assistant would begin its reply. */
  option(text: string): Int32Array {
    return this.engine.tokenize(text);
  }

  /**
   * Options to choose among, each cut after the first token no other option shares that far:
   * with the options listed in the prompt, the rest of a name is all but certain once it is told
   * apart, so it costs prefill and adds nothing. An option that begins another keeps every token.
   */
  choices(texts: string[]): Int32Array[] {
    const tokens = texts.map((t) => this.option(t));
    return tokens.map((own, i) => {
      let keep = 1;
      for (const [j, other] of tokens.entries()) {
        if (j === i) continue;
        let shared = 0;
        while (shared < own.length && shared < other.length && own[shared] === other[shared]) shared++;
        keep = Math.max(keep, Math.min(own.length, shared + 1));
      }
      return own.subarray(0, keep);
    });
  }
}

/** A claim to judge Yes or No, put as what it is: a question ("Yes" means its answer is yes) or a statement. */
export function claimLine(claim: string): string {
  return claim.trimEnd().endsWith('?') ? `Question: ${claim}` : `Statement: ${claim}`;
}

/**
 * A claim with what makes it true or false when the asker says (yes-no's when_true / when_false):
 * the lines yes-no's branch asks, and a head of yes-no reads (src/heads/reading.ts).
 */
export function claimLines(claim: string, hints: { when_true?: string; when_false?: string } = {}): string {
  return (
    claimLine(claim) +
    (hints.when_true ? `\nTrue when: ${hints.when_true}` : '') +
    (hints.when_false ? `\nFalse when: ${hints.when_false}` : '')
  );
}

/** Two token arrays, one after the other. */
export function concat(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
