// classify: which label fits a text, from the log-probabilities of the model writing each label
// name (up to the token that tells it apart) after the text's reading (reading.ts). The labels
// follow the text (listing them first, which would let the prefix cache keep them, loses
// accuracy), listed in the set's own orders (label-jobs.ts): each listing's scores are calibrated
// against the label set's prior in the same listing (label-priors.ts) and the decision is their
// average, so it does not depend on the order the request lists its labels in. A question, when
// the asker gives one (System One's choice instructions), is read with the labels. A label whose
// description states when it applies ("deny: Refuse the return: the item was opened, or ...") also
// gains the evidence of those conditions, each asked as yes-no asks it (conditions.ts). The figures:
// docs/performance.md, "Where the decision code's constants come from".
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { charsOf, type BilledBody } from './billing.js';
import { costOf, promptTokensOf, type Cost } from './cost.js';
import { argmax, calibration, confidence, normalise, temperature } from './distribution.js';
import { LabelJobs, type LabelOrders } from './label-jobs.js';
import { calibrated, LabelPriors } from './label-priors.js';
import { labelChars, labelsOf, type Label } from './labels.js';
import { Reading } from './reading.js';
import { Conditions } from './conditions.js';
import { YesNo } from './yes-no.js';
import { shaped, textsOf } from './texts.js';
import type { HeadDecider } from './head-decider.js';
import { optionsJob, type OptionReadout } from './option-readout.js';
import type { Static } from '@sinclair/typebox';
import type { ClassifyRequest, ClassifyResult as ClassifyResultSchema } from '../api/classify.js';

export type ClassifyInput = Static<typeof ClassifyRequest>;
export type ClassifyResult = Static<typeof ClassifyResultSchema>;

// A set longer than the classify route allows (System One's choices take up to 255 options) is read
// once, in the request's order and without the content-free prior: each listing is another prefill
// of all of it (4,000 tokens for 255 options), minutes on 2 cores.
const OWN_ORDERS_UP_TO = 64;
// Close: the top two calibrated scores within log 3 nats (a likelihood ratio under 3).
const CLOSE = Math.log(3);

/** A flat branches x options array as one row per branch. */
function rows(flat: number[], n: number): number[][] {
  return Array.from({ length: flat.length / n }, (_, k) => flat.slice(k * n, (k + 1) * n));
}

/** The distance in nats between the best and the second-best score. */
function gap(z: number[]): number {
  const [a, b] = [...z].sort((x, y) => y - x);
  return a! - b!;
}

/** Each text's label scores with every given evidence (nats per label, one row per text) added. */
function added(...evidence: (number[][] | undefined)[]): (z: number[], i: number) => number[] {
  return (z, i) => evidence.reduce<number[]>((acc, e) => (e ? acc.map((x, k) => x + e[i]![k]!) : acc), z);
}

function mean(zs: number[][]): number[] {
  return zs[0]!.map((_, i) => zs.reduce((s, z) => s + z[i]!, 0) / zs.length);
}

/** How a classification is asked beyond its labels. */
export interface ClassifyOptions {
  /** The asker's question, read with the labels (System One's instructions). */
  question?: string;
  /** Added to each text's label scores (nats) before deciding. */
  evidence?: number[][];
  /** Each text's reading (`branches` after the reading's prefix, `options`), when the caller scored it. */
  first?: ArrayLike<number>[];
  /**
   * Read the labels as listed, and again in the set's own orders only where the two best are within
   * CLOSE (a tree's levels: their order is the author's, and three listings of every level cost 2.5x
   * on short texts).
   */
  listedFirst?: boolean;
}

export class Classify {
  private readonly reading: Reading;
  private readonly conditions: Conditions;
  private readonly jobs: LabelJobs;
  private readonly priors: LabelPriors; // of the labels in the set's own orders
  private readonly askedPriors: LabelPriors; // of the labels in the request's order (the trained readout's)

  constructor(
    engine: Engine,
    private readonly heads?: HeadDecider,
    private readonly readout?: OptionReadout,
  ) {
    this.reading = new Reading(engine);
    this.conditions = new Conditions(new YesNo(engine));
    this.jobs = new LabelJobs(this.reading);
    this.priors = new LabelPriors(this.jobs, 'own');
    this.askedPriors = new LabelPriors(this.jobs, 'asked');
  }

  /** The branches that list `labels` after the reading's prefix: one per listing it is read in. */
  branches(labels: Label[], question?: string): Int32Array[] {
    return this.jobs.branches(labels, question, ordersOf(labels));
  }

  /** The options every listing of `labels` scores: their names, in the request's order. */
  options(labels: Label[]): Int32Array[] {
    return this.jobs.options(labels);
  }

  /** The label set's content-free prior as listed in `orders`; none for a set too long to read twice. */
  private priorOf(
    session: Session,
    labels: Label[],
    orders: LabelOrders,
    question?: string,
  ): Promise<number[]> | number[] {
    if (labels.length > OWN_ORDERS_UP_TO) return labels.map(() => 0);
    return (orders === 'own' ? this.priors : this.askedPriors).of(session, labels, question);
  }

  /**
   * Scores every text in the request's `session` and decides each; the label set's prior is
   * computed alongside (once per label set and question) and divided out. `cost`: what each
   * text's reading took, nothing when the caller gave it.
   */
  async classified(
    session: Session,
    texts: string[],
    labels: Label[],
    asked: ClassifyOptions = {},
  ): Promise<{ results: ClassifyResult[]; cost: Cost[] }> {
    const { question, evidence, first: given, listedFirst } = asked;
    if (this.readout) return this.readOut(this.readout, session, texts, labels, evidence);
    const orders = listedFirst ? 'asked' : ordersOf(labels);
    const [prior, scored] = await Promise.all([
      this.priorOf(session, labels, orders, question),
      given ? undefined : session.score(texts.map((t) => this.jobs.job(t, labels, question, orders))),
    ]);
    const read = given ?? scored!.map((r) => r.logprobs);
    const conditioned = await this.conditioned(session, texts, labels);
    const withEvidence = added(evidence, conditioned?.evidence);
    const z = read.map((flat) => mean(rows(calibrated(flat, prior), labels.length)));
    const cost = texts.map((_, i) => costOf(scored?.[i], conditioned?.cost[i]));
    const close = texts.flatMap((_, i) =>
      listedFirst && labels.length > 2 && ordersOf(labels) === 'own' && gap(withEvidence(z[i]!, i)) < CLOSE ? [i] : [],
    );
    if (close.length > 0) {
      const [ownPrior, again] = await Promise.all([
        this.priorOf(session, labels, 'own', question),
        session.score(close.map((i) => this.jobs.job(texts[i]!, labels, question, 'own'))),
      ]);
      close.forEach((i, j) => {
        z[i] = mean(rows(calibrated(again[j]!.logprobs, ownPrior), labels.length));
        cost[i] = costOf(cost[i], again[j]);
      });
    }
    return { results: z.map((zi, i) => this.decide(labels, withEvidence(zi, i))), cost };
  }

  /**
   * With the trained readout: each text's labels are read as zero-shot and then written out after
   * the whole prompt (optionReadings), and decided by the readout's scores. Every label is read in
   * the context of the same prompt whatever the text, so no second reading in other orders is asked.
   */
  private async readOut(
    readout: OptionReadout,
    session: Session,
    texts: string[],
    labels: Label[],
    evidence?: number[][],
  ): Promise<{ results: ClassifyResult[]; cost: Cost[] }> {
    const { z, first, read } = await this.optionReadings(session, texts, labels, readout.layer);
    const conditioned = await this.conditioned(session, texts, labels);
    const withEvidence = added(evidence, conditioned?.evidence);
    const results = z.map((zi, i) => this.result(labels, normalise(withEvidence(readout.scores(zi, read[i]!), i))));
    return { results, cost: first.map((r, i) => costOf(r, read[i], conditioned?.cost[i])) };
  }

  /** The evidence of the labels' conditions (conditions.ts), read after each text's shared reading. */
  private conditioned(session: Session, texts: string[], labels: Label[]) {
    return this.conditions.evidence(session, labels, () =>
      texts.map((t) => {
        const excerpt = this.reading.reader.sample(t);
        return { prefix: this.reading.prefix(t, excerpt), text: excerpt.text };
      }),
    );
  }

  /**
   * What a trained readout reads of each text: the zero-shot reading `z` (calibrated log-probabilities,
   * from `first`) and, per label, `layer`'s hidden state after the label written out in full and the
   * log-probability that the reply ends there (`read`: optionsJob). The zero-shot job's prefix ends
   * one token short of its prompt, so the slot keeps all but that token for the second job, which
   * continues the same prompt and decodes only the labels. bench/train/readouts.ts fits on these.
   */
  async optionReadings(
    session: Session,
    texts: string[],
    labels: Label[],
    layer: number,
  ): Promise<{ z: number[][]; first: ScoreResult[]; read: ScoreResult[] }> {
    const prompts = texts.map((t) => {
      const job = this.jobs.job(t, labels);
      return { job, whole: this.whole(job) };
    });
    const jobs = prompts.map(({ job, whole }) => ({
      ...job,
      prefix: whole.subarray(0, -1),
      branches: [whole.subarray(-1)],
    }));
    const [prior, first] = await Promise.all([this.askedPriors.of(session, labels), session.score(jobs)]);
    const names = labels.map((l) => this.reading.prompt.option(l.name));
    const read = await session.score(
      prompts.map(({ whole }) => optionsJob(whole, names, this.reading.prompt.endOfTurn(), layer)),
    );
    return { z: first.map((r) => calibrated(r.logprobs, prior)), first, read };
  }

  /** A one-branch job's whole prompt: the prefix and the branch. */
  private whole(job: ScoreJob): Int32Array {
    return Int32Array.from([...job.prefix, ...job.branches[0]!]);
  }

  /** The labels' probabilities from their calibrated scores, at the fitted temperature. */
  private decide(labels: Label[], z: number[]): ClassifyResult {
    return this.result(labels, normalise(z, temperature(calibration.classify, labels.length)));
  }

  private result(labels: Label[], p: number[]): ClassifyResult {
    const best = argmax(p);
    return {
      label: labels[best]!.name,
      probability: p[best]!,
      confidence: confidence(p),
      scores: Object.fromEntries(labels.map((l, i) => [l.name, p[i]!])),
    };
  }

  async run(
    input: ClassifyInput,
    session: Session,
  ): Promise<BilledBody<ClassifyResult | { results: ClassifyResult[] }>> {
    const { texts, list } = textsOf(input);
    const labels = labelsOf(input.labels);
    const inputChars = charsOf(input.text, input.texts) + labelChars(labels) * texts.length;
    const byHead = await this.heads?.decide({ capability: 'classify', labels }, texts, session);
    if (byHead) {
      const results = byHead.probabilities.map((p) => {
        const byName = new Map(byHead.outcomes.map((name, k) => [name, p[k]!]));
        return this.result(
          labels,
          labels.map((l) => byName.get(l.name)!),
        );
      });
      return { body: shaped(results, list), inputChars, inputTokens: byHead.promptTokens, heads: [byHead.head] };
    }
    const { results, cost } = await this.classified(session, texts, labels);
    return {
      body: shaped(results, list),
      inputChars,
      inputTokens: promptTokensOf(cost),
    };
  }
}

/** The orders a label set is listed in: its own, unless it is too long to list more than once. */
function ordersOf(labels: Label[]): LabelOrders {
  return labels.length > OWN_ORDERS_UP_TO ? 'asked' : 'own';
}
