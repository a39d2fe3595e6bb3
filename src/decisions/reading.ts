// The one reading of a text that every decision about it shares: the same instructions and the
// text, then the decision's own question. yes-no's statements, classify's labels and rate's scale
// are branches after that prefix, and so are System One's nouls, choices and scores (which are
// those decisions), so a request prefills its text once however many decisions it asks, and a
// decision gets the same numbers whichever wire asks it. The rules of every kind live in the
// instructions, which every request shares (the prompt cache keeps them), so the branches stay short.
import type { Engine } from '../engine/engine.js';
import { Prompt } from './prompt.js';
import { Reader, type Excerpt } from './windows.js';

/**
 * The version of this reading. What is fitted on what the model reads (heads, trained readouts)
 * records it and applies only under the same version: 2 since the decisions share this reading.
 */
export const READING_VERSION = 2;

export const READING_SYSTEM =
  'You answer questions about a text. A statement or a yes/no question: answer Yes if the text says or ' +
  'clearly implies that it is true, otherwise answer No. Labels: choose the one label that best describes ' +
  'the text (its purpose or topic, or what the question asks); when several could apply, choose the most ' +
  'specific one, and reply with the label exactly as written. A scale: reply with the words of the level ' +
  'that fits best, not its number. Reply with that alone, nothing else.';

export class Reading {
  readonly prompt: Prompt;
  readonly reader: Reader;

  constructor(engine: Engine) {
    this.prompt = new Prompt(engine, READING_SYSTEM);
    this.reader = new Reader(engine);
  }

  /**
   * The prefix every decision about `text` shares: the instructions and the text, a sample of a long
   * one unless the decision read an excerpt of its own (yes-no's statements focus on theirs).
   */
  prefix(text: string, excerpt: Excerpt = this.reader.sample(text)): Int32Array {
    return this.prompt.prefix(`Text: ${excerpt.text}\n\n`);
  }

  /** A decision's question after the prefix; `question` is the asker's own wording, when it gives one. */
  branch(body: string, question?: string): Int32Array {
    return this.prompt.branch(question === undefined ? body : `Question: ${question}\n${body}`);
  }
}
