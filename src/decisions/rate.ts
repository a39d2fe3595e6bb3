// rate: where a text sits on an ordered scale, from the log-probabilities of the model writing
// each level's own words after the text's reading (reading.ts). The scale is numbered for
// reference, but a level's number is not what is scored: descriptions with numbers of their own
// ("7/10", a 1-10 scale) pull a written digit to the wrong level. A question, when the asker gives
// one (System One's score instructions), is read with the scale.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { charsOf, type Billed } from './billing.js';
import type { Cost } from './classify.js';
import { argmax, calibration, confidence, normalise, temperature } from './distribution.js';
import { Reading } from './reading.js';
import { shaped, textsOf } from './texts.js';
import type { Learned } from './learned.js';
import { optionsJob, type OptionReadout } from './option-readout.js';
import type { Static } from '@sinclair/typebox';
import type { RateRequest, RateResult as RateResultSchema } from '../api/rate.js';

export type RateInput = Static<typeof RateRequest>;
export type RateResult = Static<typeof RateResultSchema>;

/** The shipped readout of rate over the levels (bench/rate-readout.ts), read by OptionReadout.forModel. */
export const RATE_READOUT_FILE = new URL('../../../src/decisions/readouts/rate.json', import.meta.url);

/** How a rating is asked beyond its scale. */
export interface Asked {
  /** The asker's question, read with the scale (System One's instructions). */
  question?: string;
  /** Each text's first reading (`branch` after the reading's prefix, `options`), when the caller scored it. */
  first?: ArrayLike<number>[];
}

export class Rate {
  private readonly reading: Reading;

  constructor(
    private readonly engine: Engine,
    private readonly heads?: Learned,
    private readonly readout?: OptionReadout,
  ) {
    this.reading = new Reading(engine);
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
    const { results, cost } = await this.rated(score, texts, input.scale);
    return { body: shaped(results, list), inputChars, inputTokens: cost.reduce((n, c) => n + c.promptTokens, 0) };
  }

  /** The branch that shows `scale` after the reading's prefix and asks for a level. */
  branch(scale: string[], question?: string): Int32Array {
    const numbered = scale.map((s, i) => `${i}: ${s}`).join('\n');
    return this.reading.branch(
      `Scale from 0 (lowest) to ${scale.length - 1} (highest):\n${numbered}\n\n` +
        'Which level of the scale fits the text? Reply with its words, not its number.',
      question,
    );
  }

  /** The options the branch scores: each level's words, cut where they are told apart. */
  options(scale: string[]): Int32Array[] {
    return this.reading.prompt.choices(scale);
  }

  /**
   * Rates every text with `score` (the engine's, or a session's): the zero-shot reading, read again
   * by the trained readout when there is one. `cost`: what each text's reading took, the first
   * reading aside when the caller gave it.
   */
  async rated(
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    texts: string[],
    scale: string[],
    asked: Asked = {},
  ): Promise<{ results: RateResult[]; cost: Cost[] }> {
    if (!this.readout) {
      const { z, cost } = await this.zeroShot(score, texts, scale, asked);
      return { results: z.map((zi) => rated(scale, normalise(zi))), cost };
    }
    const readout = this.readout;
    const { z, read, cost } = await this.levelReadings(score, texts, scale, [readout.layer], asked);
    return { results: z.map((zi, i) => rated(scale, normalise(readout.scores(zi, read[i]!)))), cost };
  }

  /** The levels' calibrated log-probabilities (up to a constant) per text: the zero-shot reading. */
  private async zeroShot(
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    texts: string[],
    scale: string[],
    { question, first }: Asked,
  ): Promise<{ z: number[][]; cost: Cost[] }> {
    const scored = first ? undefined : await score(texts.map((text) => this.job(text, scale, question)));
    const t = temperature(calibration.rate, scale.length);
    const rows = first ?? scored!.map((r) => r.logprobs);
    return {
      z: rows.map((row) => Array.from(row, (x) => x / t)),
      cost: texts.map((_, i) => ({
        promptTokens: scored?.[i]!.promptTokens ?? 0,
        decodeMs: scored?.[i]!.decodeMs ?? 0,
      })),
    };
  }

  /** The job that scores every level of `scale` for one text. */
  private job(text: string, scale: string[], question?: string): ScoreJob {
    return {
      prefix: this.reading.prefix(text),
      branches: [this.branch(scale, question)],
      options: this.options(scale),
    };
  }

  /**
   * What a trained readout over the levels reads of each text (as Classify.optionReadings): the
   * zero-shot reading `z`, and per level, `layers`' hidden states after the level written out in
   * full and the log-probability that the reply ends there (`read`: optionsJob, one row per layer
   * asked), read after the whole prompt (prefix and branch). bench/rate-readout.ts fits on these.
   */
  async levelReadings(
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    texts: string[],
    scale: string[],
    layers: number[],
    asked: Asked = {},
  ): Promise<{ z: number[][]; read: ScoreResult[]; cost: Cost[] }> {
    const { z, cost } = await this.zeroShot(score, texts, scale, asked);
    const branch = this.branch(scale, asked.question);
    const levels = scale.map((s) => this.reading.prompt.option(s));
    const read = await score(
      texts.map((text) => ({
        ...optionsJob(concat(this.reading.prefix(text), branch), levels, this.reading.prompt.endOfTurn(), layers[0]!),
        hiddenLayers: layers,
      })),
    );
    return {
      z,
      read,
      cost: cost.map((c, i) => ({
        promptTokens: c.promptTokens + read[i]!.promptTokens,
        decodeMs: c.decodeMs + read[i]!.decodeMs,
      })),
    };
  }
}

function concat(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
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
