// How a head reads a text: a prompt of its own per capability, with the decision's definition
// first (the statement, the label list, the tree, the scale, the field: the same for every request
// of a signature, so the prompt cache keeps it) and the text after it (with verify's value), so a
// request pays only for its text. One job per signature, one branch per text. What is read at the
// answer position: the model's hidden state (the head's features) and the log-probabilities of
// each outcome's first token (its zero-shot reading, the head's offset). No option is decoded past
// its first token.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import { labelList } from '../decisions/labels.js';
import { claimLine, Prompt } from '../decisions/prompt.js';
import { childrenOf, descriptionOf, leafPaths, type Tree } from '../decisions/tree-paths.js';
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
  verify:
    'You check values against texts. Answer Yes if the text gives the value for the field (numbers compare ' +
    'as numbers, formatting aside), otherwise answer No: another value, the value of another field, or a ' +
    'field the text does not give. Reply with one word: Yes or No.',
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
   * Reads every text under one signature (one job); `score` is the engine's or a session's;
   * `values`: verify's value per text.
   */
  async read(
    sig: Signature,
    texts: string[],
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
    values?: string[],
  ): Promise<{ readings: Reading[]; promptTokens: number; decodeMs: number }> {
    const { job, words } = await this.job(sig, texts, values);
    const [r] = await score([job]);
    const dim = this.engine.hiddenSize * this.layers.length;
    const n = job.options.length;
    const readings = texts.map((_, b) => {
      const row = r!.logprobs.subarray(b * n, (b + 1) * n);
      return {
        hidden: r!.hidden!.slice(b * dim, (b + 1) * dim),
        base: words.map((ws) => Math.log(ws.reduce((s, w) => s + Math.exp(row[w.option]!) / w.sharedBy, 0))),
      };
    });
    return { readings, promptTokens: r!.promptTokens, decodeMs: r!.decodeMs };
  }

  private async job(sig: Signature, texts: string[], values?: string[]) {
    const d = sig.definition;
    const prompt = this.prompts[d.capability];
    const branches = await Promise.all(texts.map((t, i) => this.branchText(d, t, values?.[i])));
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
    const options = [...new Set(firsts.flat())];
    const count = new Map<number, number>();
    for (const ts of firsts) for (const t of new Set(ts)) count.set(t, (count.get(t) ?? 0) + 1);
    const job: ScoreJob = {
      prefix: prompt.prefix(this.definitionText(d)),
      branches: branches.map((b) => prompt.branch(b)),
      options: options.map((t) => Int32Array.of(t)),
      hidden: true,
      hiddenLayers: this.layers,
    };
    // An outcome's first token shared with others (labels "alarm_query" and "alarm_set") lends
    // each of them an equal part of its probability.
    const words = firsts.map((ts) => ts.map((t) => ({ option: options.indexOf(t), sharedBy: count.get(t)! })));
    return { job, words };
  }

  /** What one branch reads: the text (a sample of a long one; verify's, around the value) and the question. */
  private async branchText(d: Definition, text: string, value: string | undefined): Promise<string> {
    if (d.capability === 'verify') {
      if (value === undefined) throw new Error('a verify head reads a value with each text');
      const field = d.field.description ? `${d.field.name} (${d.field.description})` : d.field.name;
      const excerpt = await this.reader.focus(text, [`${field}: ${value}`]);
      return `Text: ${excerpt.text}\n\nValue: ${value}\nDoes the text give this value for the field?`;
    }
    const tail =
      d.capability === 'yes-no'
        ? ''
        : d.capability === 'classify' || d.capability === 'classify-tree'
          ? '\n\nThe best label:'
          : '\n\nWhich level of the scale fits the text? Reply with its words, not its number.';
    return `Text: ${this.reader.sample(text).text}${tail}`;
  }

  private definitionText(d: Definition): string {
    if (d.capability === 'yes-no') {
      let s = claimLine(d.statement);
      if (d.when_true) s += `\nTrue when: ${d.when_true}`;
      if (d.when_false) s += `\nFalse when: ${d.when_false}`;
      return `${s}\n\n`;
    }
    if (d.capability === 'classify') return `Labels:\n${labelList(d.labels)}\n\n`;
    if (d.capability === 'classify-tree') return treeText(d.tree);
    if (d.capability === 'verify') {
      const { name, description } = d.field;
      return `Field: ${name}${description ? ` (${description})` : ''}\n\n`;
    }
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
