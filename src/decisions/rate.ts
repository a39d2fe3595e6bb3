// rate: where a text sits on an ordered scale, from the log-probabilities of the model writing
// each level's own words. The scale is numbered for reference, but a level's number is not what
// is scored: descriptions with numbers of their own ("7/10", a 1-10 scale) pull a written digit
// to the wrong level. The scale comes before the text, so it is cached across calls.
import type { ScoreJob } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { charsOf, type Billed } from './billing.js';
import { argmax, calibration, confidence, normalise, temperature } from './distribution.js';
import { Prompt } from './prompt.js';
import { shaped, textsOf } from './texts.js';
import { Reader } from './windows.js';
import type { Learned } from './learned.js';
import type { Static } from '@sinclair/typebox';
import type { RateRequest, RateResult as RateResultSchema } from '../api/rate.js';

export type RateInput = Static<typeof RateRequest>;
export type RateResult = Static<typeof RateResultSchema>;

const SYSTEM = 'You rate texts on a scale. Reply with the level that fits best, nothing else.';

export class Rate {
  private readonly prompt: Prompt;
  private readonly reader: Reader;
  private readonly question: Int32Array;

  constructor(
    private readonly engine: Engine,
    private readonly heads?: Learned,
  ) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.question = this.prompt.branch('Which level of the scale fits the text? Reply with its words, not its number.');
  }

  async run(input: RateInput, signal?: AbortSignal): Promise<Billed<RateResult | { results: RateResult[] }>> {
    const { texts, list } = textsOf(input);
    const inputChars = charsOf(input.text, input.texts) + charsOf(input.scale) * texts.length;
    const score = (jobs: ScoreJob[]) => this.engine.score(jobs, signal);
    const learned = await this.heads?.decide({ capability: 'rate', scale: input.scale }, texts, score);
    if (learned) {
      const results = learned.probabilities.map((p) => rated(input.scale, p));
      return { body: shaped(results, list), inputChars, inputTokens: learned.promptTokens, heads: [learned.head] };
    }
    const scale = input.scale.map((s, i) => `${i}: ${s}`).join('\n');
    const options = this.prompt.choices(input.scale);
    const jobs = texts.map((text) => ({
      prefix: this.prompt.prefix(
        `Scale from 0 (lowest) to ${input.scale.length - 1} (highest):\n${scale}\n\nText: ${this.reader.sample(text).text}\n\n`,
      ),
      branches: [this.question],
      options,
    }));
    const scored = await score(jobs);
    const results = scored.map((r) =>
      rated(input.scale, normalise(r.logprobs, temperature(calibration.rate, input.scale.length))),
    );
    return {
      body: shaped(results, list),
      inputChars,
      inputTokens: scored.reduce((n, r) => n + r.promptTokens, 0),
    };
  }
}

/** A text's place on the scale from the levels' probabilities. */
function rated(scale: string[], p: number[]): RateResult {
  const level = argmax(p);
  return {
    score: p.reduce((s, x, i) => s + x * i, 0),
    level,
    label: scale[level]!,
    confidence: confidence(p),
    scores: p,
  };
}
