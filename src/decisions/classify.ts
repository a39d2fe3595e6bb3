// classify: which label fits a text, from the log-probabilities of the model writing each label
// name (up to the token that tells it apart) after one prefill. The labels follow the text: measured on the eval
// set, listing them before the text (which would let the prefix cache keep them) lost 10 points.
// The wording was chosen on bench/eval among four variants (18 of 21 against 17 for the others),
// and its short question costs a dozen tokens less than the first one. Scores are calibrated
// against the label set's prior (label-priors.ts): on the 36 bench/eval cases 33 right against 31.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { charsOf, type Billed } from './billing.js';
import { argmax, calibration, confidence, normalise, temperature } from './distribution.js';
import { calibrated, LabelPriors } from './label-priors.js';
import { labelChars, labelList, labelsOf, type Label } from './labels.js';
import { Prompt } from './prompt.js';
import { shaped, textsOf, type TextInput } from './texts.js';
import { Reader } from './windows.js';

export interface ClassifyInput extends TextInput {
  labels: string[] | Record<string, string>;
}

export interface ClassifyResult {
  label: string; // the winner's name, never its description
  probability: number; // the winner's share
  confidence: number; // 1 - normalised entropy
  scores: Record<string, number>; // one probability per label, summing to 1
}

const SYSTEM =
  'You classify texts. Choose the one label that best describes what the text is: its purpose or topic. ' +
  'When several labels could apply, choose the most specific one. Reply with the label exactly as written, nothing else.';

export class Classify {
  private readonly prompt: Prompt;
  private readonly reader: Reader;
  private readonly priors: LabelPriors;

  constructor(private readonly engine: Engine) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.priors = new LabelPriors(engine, (text, labels) => this.job(text, labels));
  }

  /** The job that scores every label for one text (a sample of it when it is long). */
  private job(text: string, labels: Label[]): ScoreJob {
    return {
      prefix: this.prompt.prefix(`Text: ${this.reader.sample(text).text}\n\n`),
      branches: [this.prompt.branch(`Labels:\n${labelList(labels)}\n\nThe best label:`)],
      options: this.prompt.choices(labels.map((l) => l.name)),
    };
  }

  /**
   * Scores every text with `score` (the engine's, or a session's) and decides each; the label
   * set's prior is computed alongside (once per label set) and divided out.
   */
  async classified(score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>, texts: string[], labels: Label[]): Promise<{ results: ClassifyResult[]; scored: ScoreResult[] }> {
    const [prior, scored] = await Promise.all([this.priors.of(labels), score(texts.map((t) => this.job(t, labels)))]);
    return { results: scored.map((r) => this.decide(labels, r, prior)), scored };
  }

  /** The labels' probabilities: the model's scores with the label set's prior divided out, then at the fitted temperature. */
  private decide(labels: Label[], scored: ScoreResult, prior: number[]): ClassifyResult {
    const p = normalise(calibrated(scored.logprobs, prior), temperature(calibration.classify, labels.length));
    const best = argmax(p);
    return {
      label: labels[best]!.name,
      probability: p[best]!,
      confidence: confidence(p),
      scores: Object.fromEntries(labels.map((l, i) => [l.name, p[i]!])),
    };
  }

  async run(input: ClassifyInput, signal?: AbortSignal): Promise<Billed<ClassifyResult | { results: ClassifyResult[] }>> {
    const { texts, list } = textsOf(input);
    const labels = labelsOf(input.labels);
    const { results, scored } = await this.classified((jobs) => this.engine.score(jobs, signal), texts, labels);
    return {
      body: shaped(results, list),
      inputChars: charsOf(input.text, input.texts) + labelChars(labels) * texts.length,
      inputTokens: scored.reduce((n, r) => n + r.promptTokens, 0),
    };
  }
}
