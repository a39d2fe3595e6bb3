// classify-tree: one classify per level of the tree on the same text, descending into the winner.
// Each level re-reads the text (after that level's labels), so latency grows with depth.
import type { Engine } from '../engine/engine.js';
import type { Billed } from './billing.js';
import type { Classify } from './classify.js';
import { labelChars, type Label } from './labels.js';
import { shaped, textsOf } from './texts.js';
import type { Static } from '@sinclair/typebox';
import type {
  ClassifyTree as ClassifyTreeSchema,
  ClassifyTreeLevel,
  ClassifyTreeRequest,
  ClassifyTreeResult as ClassifyTreeResultSchema,
} from '../api/classify-tree.js';

export type Tree = Static<typeof ClassifyTreeSchema>;
export type TreeNode = Exclude<Tree[string], string>;
export type ClassifyTreeInput = Static<typeof ClassifyTreeRequest>;
export type TreeLevel = Static<typeof ClassifyTreeLevel>;
export type ClassifyTreeResult = Static<typeof ClassifyTreeResultSchema>;

export class ClassifyTree {
  constructor(
    private readonly engine: Engine,
    private readonly classify: Classify,
  ) {}

  async run(
    input: ClassifyTreeInput,
    signal?: AbortSignal,
  ): Promise<Billed<ClassifyTreeResult | { results: ClassifyTreeResult[] }>> {
    const { texts, list } = textsOf(input);
    const results = await this.engine.session(
      (run) =>
        Promise.all(
          texts.map(async (text) => {
            const levels: TreeLevel[] = [];
            for (let tree: Tree | undefined = input.tree; tree;) {
              const labels = levelLabels(tree);
              const {
                results: [decided],
                scored: [scored],
              } = await this.classify.classified((jobs) => run.score(jobs), [text], labels);
              levels.push({
                ...decided,
                input_chars: text.length + labelChars(labels),
                input_tokens: scored!.promptTokens,
                inference_ms: Math.round(scored!.decodeMs),
              });
              const node: string | TreeNode | undefined = tree[decided.label];
              tree =
                typeof node === 'object' && node.labels && Object.keys(node.labels).length > 0
                  ? node.labels
                  : undefined;
            }
            return {
              path: levels.map((l) => l.label),
              label: levels[levels.length - 1]!.label,
              probability: levels.reduce((p, l) => p * l.probability, 1),
              confidence: levels.reduce((p, l) => p * l.confidence, 1),
              levels,
            };
          }),
        ),
      signal,
    );
    return {
      body: shaped(results, list),
      inputChars: results.reduce((n, r) => n + r.levels.reduce((m, l) => m + l.input_chars, 0), 0),
      inputTokens: results.reduce((n, r) => n + r.levels.reduce((m, l) => m + l.input_tokens, 0), 0),
    };
  }
}

function levelLabels(tree: Tree): Label[] {
  return Object.entries(tree).map(([name, node]) => {
    const description = typeof node === 'string' ? node : node.description;
    return description ? { name, description } : { name };
  });
}
