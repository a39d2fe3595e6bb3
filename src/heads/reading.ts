// How a head reads a text: a prompt of its own per capability, with the decision's definition
// first (the statement, the label list, the tree, the scale: the same for every request of a
// signature, so the prompt cache keeps it) and the text after it, so a request pays only for its
// text; one job per signature, one branch per text. verify is read as its route reads it (the
// route reads the text anyway): a job per text, the value in the branch. What is read at the
// answer position: the model's hidden state (the head's features) and the log-probabilities of
// each outcome's first token (its zero-shot reading, the head's offset). No option is decoded past
// its first token.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { labelList } from '../decisions/labels.js';
import { claimLine, Prompt } from '../decisions/prompt.js';
import { childrenOf, descriptionOf, leafPaths, type Tree } from '../decisions/tree-paths.js';
import { checkQuestion, fieldWords, focusQuery, VERIFY_SYSTEM } from '../decisions/verify.js';
import { Reader } from '../decisions/windows.js';
import type { Definition, Signature } from './signature.js';

const SYSTEM: Record<Definition['capability'], string> = {
  'yes-no':
    'You check statements against texts. Answer Yes if the text says or clearly implies that the ' +
    'statement is true, otherwise answer No. Reply with one word: Yes or No.',
  classify:
    'You classify texts. Choose the one label that best describes what the text is: its purpose or topic. ' +
    'When several labels could apply, choose the most specific one. Reply with the label exactly as written, nothing else.',
  'classify-tree':
    'You classify texts. Choose the one label that best describes what the text is: its purpose or topic. ' +
    "Labels are grouped; a group's description applies to every label in it. " +
    'Reply with the label exactly as written, without its group, nothing else.',
  rate: 'You rate texts on a scale. Reply with the level that fits best, nothing else.',
  verify: VERIFY_SYSTEM,
};

// Case variants of each yes-no answer share its probability mass, as in yes-no.ts.
const WORDS: Record<string, string[]> = { false: ['No', 'no'], true: ['Yes', 'yes'] };

// The layers whose hidden states a head reads (-1: the final state after the output norm).
export const LAYERS = [-1];

/** What a head reads of one text. */
export interface Reading {
  hidden: Float32Array;
  /** Per outcome of the signature: the zero-shot log-probability of its first token(s). */
  base: number[];
}

export class HeadReader {
  private readonly prompts: Record<Definition['capability'], Prompt>;
  private readonly reader: Reader;

  constructor(
    private readonly engine: Engine,
    private readonly layers: number[] = LAYERS,
  ) {
    this.prompts = Object.fromEntries(
      Object.entries(SYSTEM).map(([capability, system]) => [capability, new Prompt(engine, system)]),
    ) as Record<Definition['capability'], Prompt>;
    this.reader = new Reader(engine);
  }

  /**
   * Reads every text under one signature; `score` is the engine's or a session's; `values`:
   * verify's value per text.
   */
  async read(
    sig: Signature,
    texts: string[],
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    values?: string[],
  ): Promise<{ readings: Reading[]; promptTokens: number; decodeMs: number }> {
    if (texts.length === 0) return { readings: [], promptTokens: 0, decodeMs: 0 };
    const { jobs, words } = await this.jobs(sig, texts, values);
    const scored = await score(jobs);
    const dim = this.engine.hiddenSize * this.layers.length;
    const n = jobs[0]!.options.length;
    const readings = texts.map((_, i) => {
      // One job with a branch per text, or (verify) a job per text.
      const [r, b] = jobs.length === 1 ? [scored[0]!, i] : [scored[i]!, 0];
      const row = r.logprobs.subarray(b * n, (b + 1) * n);
      return {
        hidden: r.hidden!.slice(b * dim, (b + 1) * dim),
        base: words.map((ws) => Math.log(ws.reduce((s, w) => s + Math.exp(row[w.option]!) / w.sharedBy, 0))),
      };
    });
    return {
      readings,
      promptTokens: scored.reduce((t, r) => t + r.promptTokens, 0),
      decodeMs: scored.reduce((t, r) => t + r.decodeMs, 0),
    };
  }

  private async jobs(sig: Signature, texts: string[], values?: string[]) {
    const d = sig.definition;
    const prompt = this.prompts[d.capability];
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
        ? await this.verifyJobs(d.field, texts, values, read)
        : [
            {
              prefix: prompt.prefix(this.definitionText(d)),
              branches: texts.map((t) => prompt.branch(this.branchText(d, t))),
              ...read,
            },
          ];
    // An outcome's first token shared with others (labels "alarm_query" and "alarm_set") lends
    // each of them an equal part of its probability.
    const words = firsts.map((ts) => ts.map((t) => ({ option: tokens.indexOf(t), sharedBy: count.get(t)! })));
    return { jobs, words };
  }

  /**
   * verify reads as its route does (src/decisions/verify.ts): a job per text, the route's prefix
   * (the text, read around the value when long) and its check question as the branch. The route
   * then skips its own check and finds the field's values on the prefix this job has just read,
   * so a head adds little to the request.
   */
  private async verifyJobs(
    f: { name: string; description?: string },
    texts: string[],
    values: string[] | undefined,
    read: Pick<ScoreJob, 'options' | 'hidden' | 'hiddenLayers'>,
  ): Promise<ScoreJob[]> {
    if (values?.length !== texts.length) throw new Error('a verify head reads a value with each text');
    const prompt = this.prompts.verify;
    const field = fieldWords(f);
    return Promise.all(
      texts.map(async (text, i) => {
        const excerpt = await this.reader.focus(text, [focusQuery(field, values[i]!)]);
        return {
          prefix: prompt.prefix(`Text: ${excerpt.text}\n\n`),
          branches: [prompt.branch(checkQuestion(field, values[i]!))],
          ...read,
        };
      }),
    );
  }

  /** What one branch reads: the text (a sample of a long one) and the question. */
  private branchText(d: Definition, text: string): string {
    const tail =
      d.capability === 'yes-no'
        ? ''
        : d.capability === 'classify' || d.capability === 'classify-tree'
          ? '\n\nThe best label:'
          : '\n\nWhich level of the scale fits the text? Reply with its words, not its number.';
    return `Text: ${this.reader.sample(text).text}${tail}`;
  }

  private definitionText(d: Exclude<Definition, { capability: 'verify' }>): string {
    if (d.capability === 'yes-no') {
      let s = claimLine(d.statement);
      if (d.when_true) s += `\nTrue when: ${d.when_true}`;
      if (d.when_false) s += `\nFalse when: ${d.when_false}`;
      return `${s}\n\n`;
    }
    if (d.capability === 'classify') return `Labels:\n${labelList(d.labels)}\n\n`;
    if (d.capability === 'classify-tree') return treeText(d.tree);
    const scale = d.scale.map((s, i) => `${i}: ${s}`).join('\n');
    return `Scale from 0 (lowest) to ${d.scale.length - 1} (highest):\n${scale}\n\n`;
  }
}

/**
 * A tree as one list of labels: its groups (every label with labels under it, by path) with their
 * descriptions, then every leaf with its group: "- damaged (in order): the item arrived broken".
 */
function treeText(tree: Tree): string {
  const groups: string[] = [];
  const walk = (level: Tree, above: string[]) => {
    for (const [name, node] of Object.entries(level)) {
      const children = childrenOf(node);
      if (!children) continue;
      const description = descriptionOf(node);
      groups.push(`- ${[...above, name].join(' > ')}${description ? `: ${description}` : ''}`);
      walk(children, [...above, name]);
    }
  };
  walk(tree, []);
  const leaves = leafPaths(tree).map((path) => {
    const node = path.reduce<Tree[string] | undefined>(
      (n, name, i) => (i === 0 ? tree[name] : childrenOf(n)![name]),
      undefined,
    )!;
    const group = path.length > 1 ? ` (in ${path.slice(0, -1).join(' > ')})` : '';
    const description = descriptionOf(node);
    return `- ${path.at(-1)}${group}${description ? `: ${description}` : ''}`;
  });
  return `${groups.length > 0 ? `Groups:\n${groups.join('\n')}\n\n` : ''}Labels:\n${leaves.join('\n')}\n\n`;
}
