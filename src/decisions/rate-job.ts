// rate's job: the scale, then the text, then the question asking for a level's words. rate.ts reads
// with it, and so does a fitted head of rate (src/heads/reading.ts), so the head reads the text as
// the route does without going through the route's decision.
import type { ScoreJob } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { Prompt } from './prompt.js';
import { Reader } from './windows.js';

const SYSTEM = 'You rate texts on a scale. Reply with the level that fits best, nothing else.';
/** What asks for a level, after the scale and the text. */
export const ASK_LEVEL = 'Which level of the scale fits the text? Reply with its words, not its number.';

/** The scale as rate lists it: each level's words after its number, lowest first. */
export function scaleListing(scale: string[]): string {
  const numbered = scale.map((s, i) => `${i}: ${s}`).join('\n');
  return `Scale from 0 (lowest) to ${scale.length - 1} (highest):\n${numbered}`;
}

export class RateJobs {
  readonly prompt: Prompt;
  private readonly reader: Reader;

  constructor(engine: Engine) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
  }

  /** The job that scores every level of `scale` for one text (a sample of it when it is long). */
  job(text: string, scale: string[], question?: string): ScoreJob {
    return {
      prefix: this.prompt.prefix(`${scaleListing(scale)}\n\nText: ${this.reader.sample(text).text}\n\n`),
      branches: [this.prompt.branch(question === undefined ? ASK_LEVEL : `Question: ${question}\n${ASK_LEVEL}`)],
      options: this.prompt.choices(scale),
    };
  }
}
