// How a head reads a text: as the decision it stands for reads it, one job per text: the text's
// shared reading (src/decisions/reading.ts) and the decision's own branch (yes-no's statement with
// its hints, classify's labels, a tree's leaves as one label list); rate's job (its scale, then the
// text) and verify's as their routes read them. What is read at the answer position: the model's
// hidden state (the head's features) and the log-probabilities of each outcome's first token (its
// zero-shot reading, the head's offset). No option is decoded past its first token. A head records
// READING_VERSION, the version of the reading it was fitted on: a head of another reading is not
// applied (heads.ts).
import type { ScoreJob } from '../binding.js';
import type { Engine, Session } from '../engine/engine.js';
import { costOf } from '../decisions/cost.js';
import { LabelJobs } from '../decisions/label-jobs.js';
import type { Label } from '../decisions/labels.js';
import { claimLines, Prompt } from '../decisions/prompt.js';
import { RateJobs } from '../decisions/rate-job.js';
import { Reading as DecisionReading } from '../decisions/reading.js';
import { childrenOf, descriptionOf, leafPaths, type Tree } from '../decisions/tree-paths.js';
import { checkQuestion, fieldWords, focusQuery, VERIFY_SYSTEM } from '../decisions/verify-question.js';
import type { Definition, Signature } from './signature.js';

// Case variants of each yes-no answer share its probability mass, as in yes-no.ts.
const WORDS: Record<string, string[]> = { false: ['No', 'no'], true: ['Yes', 'yes'] };

// The layers whose hidden states a head reads (-1: the final state after the output norm).
export const LAYERS = [-1];

/** The decisions that read the text's shared reading (rate and verify read prompts of their own). */
type SharedReadingDefinition = Exclude<Definition, { capability: 'verify' | 'rate' }>;

/** What a head reads of one text. */
export interface Reading {
  hidden: Float32Array;
  /** Per outcome of the signature: the zero-shot log-probability of its first token(s). */
  base: number[];
}

export class HeadReader {
  private readonly reading: DecisionReading;
  private readonly hiddenSize: number;
  private readonly verify: Prompt;
  private readonly labels: LabelJobs;
  private readonly rate: RateJobs;

  constructor(
    engine: Engine,
    private readonly layers: number[] = LAYERS,
  ) {
    this.reading = new DecisionReading(engine);
    this.hiddenSize = engine.hiddenSize;
    this.verify = new Prompt(engine, VERIFY_SYSTEM);
    this.labels = new LabelJobs(this.reading);
    this.rate = new RateJobs(engine);
  }

  /** Reads every text under one signature in `session`; `values`: verify's value per text. */
  async read(
    sig: Signature,
    texts: string[],
    session: Session,
    values?: string[],
  ): Promise<{ readings: Reading[]; promptTokens: number; decodeMs: number }> {
    if (texts.length === 0) return { readings: [], promptTokens: 0, decodeMs: 0 };
    const { jobs, words, dim } = await this.jobs(session, sig, texts, values);
    const scored = await session.score(jobs);
    const readings = scored.map((r) => ({
      hidden: r.hidden!.slice(0, dim),
      base: words.map((ws) => Math.log(ws.reduce((s, w) => s + Math.exp(r.logprobs[w.option]!) / w.sharedBy, 0))),
    }));
    return { readings, ...costOf(...scored) };
  }

  private async jobs(session: Session, sig: Signature, texts: string[], values?: string[]) {
    const d = sig.definition;
    const prompt = d.capability === 'verify' ? this.verify : this.reading.prompt;
    // Each outcome's words (one per outcome, but yes and no have two case variants; a leaf path is
    // written as its leaf's name), as first tokens.
    const written = sig.outcomes.map((o) =>
      d.capability === 'yes-no' || d.capability === 'verify'
        ? WORDS[o]!
        : d.capability === 'classify-tree'
          ? [(JSON.parse(o) as string[]).at(-1)!]
          : [o],
    );
    const firsts = written.map((ws) => ws.map((w) => prompt.option(w)[0]!));
    const tokens = [...new Set(firsts.flat())];
    const count = new Map<number, number>();
    for (const ts of firsts) for (const t of new Set(ts)) count.set(t, (count.get(t) ?? 0) + 1);
    const read = { options: tokens.map((t) => Int32Array.of(t)), hidden: true, hiddenLayers: this.layers };
    const jobs: ScoreJob[] =
      d.capability === 'verify'
        ? await this.verifyJobs(session, d.field, texts, values, read)
        : d.capability === 'rate'
          ? texts.map((text) => ({ ...this.rate.job(text, d.scale), ...read }))
          : await Promise.all(
              texts.map(async (text) => ({
                prefix: await this.prefix(session, d, text),
                branches: [this.branch(d)],
                ...read,
              })),
            );
    // An outcome's first token shared with others (labels "alarm_query" and "alarm_set") lends
    // each of them an equal part of its probability.
    const words = firsts.map((ts) => ts.map((t) => ({ option: tokens.indexOf(t), sharedBy: count.get(t)! })));
    return { jobs, words, dim: this.layers.length * this.hiddenSize };
  }

  /** The text as the decision reads it: yes-no's focused on its statement, the others' a sample. */
  private prefix(session: Session, d: SharedReadingDefinition, text: string): Promise<Int32Array> | Int32Array {
    if (d.capability !== 'yes-no') return this.reading.prefix(text);
    return this.reading.reader
      .focus(session, text, [d.statement])
      .then((excerpt) => this.reading.prefix(text, excerpt));
  }

  /** The decision's own branch after the text. */
  private branch(d: SharedReadingDefinition): Int32Array {
    if (d.capability === 'yes-no') return this.reading.prompt.branch(claimLines(d.statement, d));
    if (d.capability === 'classify') return this.labels.branch(d.labels);
    return this.labels.branch(treeLabels(d.tree));
  }

  /**
   * verify reads as its route does (src/decisions/verify.ts): a job per text, the route's prefix
   * (the text, read around the value when long) and its check question as the branch. The route
   * then skips its own check and finds the field's values on the prefix this job has just read,
   * so a head adds little to the request.
   */
  private async verifyJobs(
    session: Session,
    f: { name: string; description?: string },
    texts: string[],
    values: string[] | undefined,
    read: Pick<ScoreJob, 'options' | 'hidden' | 'hiddenLayers'>,
  ): Promise<ScoreJob[]> {
    if (values?.length !== texts.length) throw new Error('a verify head reads a value with each text');
    const field = fieldWords(f);
    return Promise.all(
      texts.map(async (text, i) => {
        const excerpt = await this.reading.reader.focus(session, text, [focusQuery(field, values[i]!)]);
        return {
          prefix: this.verify.prefix(`Text: ${excerpt.text}\n\n`),
          branches: [this.verify.branch(checkQuestion(field, values[i]!))],
          ...read,
        };
      }),
    );
  }
}

/**
 * A tree's leaves as one label list: each leaf by its name, described by the groups above it (with
 * their descriptions) and its own description: "damaged: in order (about an order): arrived broken".
 */
function treeLabels(tree: Tree): Label[] {
  return leafPaths(tree).map((path) => {
    let level: Tree | undefined = tree;
    const nodes = path.map((name) => {
      const node = level![name]!;
      level = childrenOf(node);
      return node;
    });
    const groups = path.slice(0, -1).map((name, i) => {
      const d = descriptionOf(nodes[i]!);
      return d ? `${name} (${d})` : name;
    });
    const own = descriptionOf(nodes.at(-1)!);
    const description = [groups.length > 0 ? `in ${groups.join(' > ')}` : '', own].filter(Boolean).join(': ');
    return description ? { name: path.at(-1)!, description } : { name: path.at(-1)! };
  });
}
