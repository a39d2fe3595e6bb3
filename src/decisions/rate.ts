// rate: where a text sits on an ordered scale, from the log-probabilities of the model writing
// each level's own words. The scale is numbered for reference, but a level's number is not what
// is scored: descriptions with numbers of their own ("7/10", a 1-10 scale) pull a written digit
// to the wrong level. The scale comes before the text, so it is cached across calls (read after
// the text, as the other decisions read their options, it measured worse: docs/capabilities.md,
// "One reading per decision"). A question, when the asker gives one (System One's score
// instructions), is read after the text.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { charsOf, type BilledBody } from './billing.js';
import { costOf, promptTokensOf, type Cost } from './cost.js';
import { argmax, calibration, confidence, normalise, temperature } from './distribution.js';
import { RateJobs } from './rate-job.js';
import { shaped, textsOf } from './texts.js';
import type { HeadDecider } from './head-decider.js';
import { optionsJob, type OptionReadout } from './option-readout.js';
import type { Static } from '@sinclair/typebox';
import type { RateRequest, RateResult as RateResultSchema } from '../api/rate.js';

export type RateInput = Static<typeof RateRequest>;
export type RateResult = Static<typeof RateResultSchema>;

/** The shipped readout of rate over the levels (bench/train/rate-readout.ts), read by OptionReadout.forModel. */
export const RATE_READOUT_FILE = new URL('../../../src/decisions/readouts/rate.json', import.meta.url);
/** The version of rate's reading, which what is fitted on it records (its readout). */
export const RATE_READING_VERSION = 1;

export class Rate {
  private readonly jobs: RateJobs;

  constructor(
    engine: Engine,
    private readonly heads?: HeadDecider,
    private readonly readout?: OptionReadout,
  ) {
    this.jobs = new RateJobs(engine);
  }

  async run(input: RateInput, session: Session): Promise<BilledBody<RateResult | { results: RateResult[] }>> {
    const { texts, list } = textsOf(input);
    const inputChars = charsOf(input.text, input.texts) + charsOf(input.scale) * texts.length;
    const byHead = await this.heads?.decide({ capability: 'rate', scale: input.scale }, texts, session);
    if (byHead) {
      const results = byHead.probabilities.map((p) => rated(input.scale, p));
      return { body: shaped(results, list), inputChars, inputTokens: byHead.promptTokens, heads: [byHead.head] };
    }
    const { results, cost } = await this.rated((jobs) => session.score(jobs), texts, input.scale);
    return { body: shaped(results, list), inputChars, inputTokens: promptTokensOf(cost) };
  }

  /**
   * Rates every text with `score` (a session's rounds): the zero-shot reading, read again by the
   * trained readout when there is one; `question`: the asker's own, read after the text.
   */
  async rated(
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    texts: string[],
    scale: string[],
    question?: string,
  ): Promise<{ results: RateResult[]; cost: Cost[] }> {
    if (this.readout) {
      const readout = this.readout;
      const { z, first, read } = await this.levelReadings(score, texts, scale, [readout.layer], question);
      return {
        results: z.map((zi, i) => rated(scale, normalise(readout.scores(zi, read[i]!)))),
        cost: first.map((r, i) => costOf(r, read[i])),
      };
    }
    const scored = await score(texts.map((text) => this.jobs.job(text, scale, question)));
    return {
      results: scored.map((r) => rated(scale, normalise(this.zeroShot(r, scale)))),
      cost: scored.map((r) => costOf(r)),
    };
  }

  /** The levels' calibrated log-probabilities (up to a constant): the zero-shot reading. */
  private zeroShot(r: ScoreResult, scale: string[]): number[] {
    const t = temperature(calibration.rate, scale.length);
    return Array.from(r.logprobs, (x) => x / t);
  }

  /**
   * What a trained readout over the levels reads of each text (as Classify.optionReadings): the
   * zero-shot reading `z`, and per level, `layers`' hidden states after the level written out in
   * full and the log-probability that the reply ends there (`read`: optionsJob, one row per layer
   * asked). The zero-shot job's prefix ends one token short of its prompt, so the slot keeps all but
   * that token for the second job. bench/train/rate-readout.ts fits on these.
   */
  async levelReadings(
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    texts: string[],
    scale: string[],
    layers: number[],
    question?: string,
  ): Promise<{ z: number[][]; first: ScoreResult[]; read: ScoreResult[] }> {
    const wholes = texts.map((t) => {
      const job = this.jobs.job(t, scale, question);
      return { job, whole: Int32Array.from([...job.prefix, ...job.branches[0]!]) };
    });
    const first = await score(
      wholes.map(({ job, whole }) => ({ ...job, prefix: whole.subarray(0, -1), branches: [whole.subarray(-1)] })),
    );
    const levels = scale.map((s) => this.jobs.prompt.option(s));
    const read = await score(
      wholes.map(({ whole }) => ({
        ...optionsJob(whole, levels, this.jobs.prompt.endOfTurn(), layers[0]!),
        hiddenLayers: layers,
      })),
    );
    return { z: first.map((r) => this.zeroShot(r, scale)), first, read };
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
