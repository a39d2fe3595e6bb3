// classify-tree: one classify per level of the tree on the same text, descending into the winner.
// Each level re-reads the text (after that level's labels in the tree's order, and in the level's
// own orders only where the two best are close: classify.ts, listedFirst), so latency grows with
// depth.
// A label with labels under it is read by the model as its own words only ("utility", "meta"),
// which often say little of what lies beneath. So at a level where some label has children, the
// sentence encoder also compares the text with every label under each one, and each label's score
// gains SUBTREE_WEIGHT nats per unit of its best cosine similarity.
// A tree with a fitted head (src/heads) is decided in one reading over its leaf paths instead, and
// its levels are rebuilt from it (tree-paths.ts).
import type { Engine, Session } from '../engine/engine.js';
import type { BilledBody } from './billing.js';
import type { Classify } from './classify.js';
import { labelChars, type Label } from './labels.js';
import type { HeadDecider } from './head-decider.js';
import { Similarity } from './similarity.js';
import { shaped, textsOf } from './texts.js';
import { childrenOf, treeChars, treeResultOf, type Tree } from './tree-paths.js';
import type { Static } from '@sinclair/typebox';
import type {
  ClassifyTreeLevel,
  ClassifyTreeRequest,
  ClassifyTreeResult as ClassifyTreeResultSchema,
} from '../api/classify-tree.js';

export type { Tree, TreeNode } from './tree-paths.js';
export type ClassifyTreeInput = Static<typeof ClassifyTreeRequest>;
export type TreeLevel = Static<typeof ClassifyTreeLevel>;
export type ClassifyTreeResult = Static<typeof ClassifyTreeResultSchema>;

// How much a node's subtree counts beside its own name when a level is chosen: the weight with the
// least log loss of the first level's gold label on the development sets' fit half (docs/performance.md,
// "Where the decision code's constants come from").
const SUBTREE_WEIGHT = 30;

export class ClassifyTree {
  private readonly similarity: Similarity;

  constructor(
    engine: Engine,
    private readonly classify: Classify,
    private readonly heads?: HeadDecider,
  ) {
    this.similarity = new Similarity(engine);
  }

  /** Per label: SUBTREE_WEIGHT times its subtree's best similarity to the text; none at a level of leaves. */
  private async evidence(session: Session, text: string, tree: Tree): Promise<number[][] | undefined> {
    const nodes = Object.entries(tree);
    if (!this.similarity.available || !nodes.some(([, node]) => typeof node === 'object' && node.labels))
      return undefined;
    const best = await this.similarity.best(
      session,
      text,
      nodes.map(([name, node]) => subtreeTexts(name, node)),
    );
    return [best.map((s) => SUBTREE_WEIGHT * s)];
  }

  async run(
    input: ClassifyTreeInput,
    session: Session,
  ): Promise<BilledBody<ClassifyTreeResult | { results: ClassifyTreeResult[] }>> {
    const { texts, list } = textsOf(input);
    const heads = new Set<string>();
    const results = await Promise.all(
      texts.map(async (text) => {
        const byHead = await this.byHead(session, text, input.tree);
        if (byHead) {
          heads.add(byHead.head);
          return byHead.result;
        }
        const levels: TreeLevel[] = [];
        for (let tree: Tree | undefined = input.tree; tree;) {
          const labels = levelLabels(tree);
          const {
            results: [decided],
            cost: [cost],
          } = await this.classify.classified(session, [text], labels, {
            evidence: await this.evidence(session, text, tree),
            listedFirst: true,
          });
          levels.push({
            ...decided!,
            input_chars: text.length + labelChars(labels),
            input_tokens: cost!.promptTokens,
            inference_ms: Math.round(cost!.decodeMs),
          });
          tree = childrenOf(tree[decided.label]);
        }
        return {
          path: levels.map((l) => l.label),
          label: levels[levels.length - 1]!.label,
          probability: levels.reduce((p, l) => p * l.probability, 1),
          confidence: levels.reduce((p, l) => p * l.confidence, 1),
          levels,
        };
      }),
    );
    return {
      body: shaped(results, list),
      inputChars: results.reduce((n, r) => n + r.levels.reduce((m, l) => m + l.input_chars, 0), 0),
      inputTokens: results.reduce((n, r) => n + r.levels.reduce((m, l) => m + l.input_tokens, 0), 0),
      ...(heads.size > 0 ? { heads: [...heads] } : {}),
    };
  }

  /**
   * The text's result by the tree's head, if it has one: one reading of the whole tree, so the
   * first level carries what it read and cost (the text and every label of the tree) and the
   * levels below it none.
   */
  private async byHead(
    session: Session,
    text: string,
    tree: Tree,
  ): Promise<{ head: string; result: ClassifyTreeResult } | undefined> {
    const out = await this.heads?.decide({ capability: 'classify-tree', tree }, [text], session);
    if (!out) return undefined;
    const paths = out.outcomes.map((o) => JSON.parse(o) as string[]);
    const { path, levels } = treeResultOf(tree, paths, out.probabilities[0]!);
    const cost = (i: number) =>
      i === 0
        ? {
            input_chars: text.length + treeChars(tree),
            input_tokens: out.promptTokens,
            inference_ms: Math.round(out.decodeMs),
          }
        : { input_chars: 0, input_tokens: 0, inference_ms: 0 };
    return {
      head: out.head,
      result: {
        path,
        label: path[path.length - 1]!,
        probability: levels.reduce((p, l) => p * l.probability, 1),
        confidence: levels.reduce((p, l) => p * l.confidence, 1),
        levels: levels.map((l, i) => ({ ...l, ...cost(i) })),
      },
    };
  }
}

function levelLabels(tree: Tree): Label[] {
  return Object.entries(tree).map(([name, node]) => {
    const description = typeof node === 'string' ? node : node.description;
    return description ? { name, description } : { name };
  });
}

/** What the encoder compares for a label: its own words and those of every label under it. */
function subtreeTexts(name: string, node: Tree[string]): string[] {
  const own = labelWords(name, typeof node === 'string' ? node : node.description);
  if (typeof node === 'string' || !node.labels) return [own];
  return [own, ...Object.entries(node.labels).flatMap(([n, child]) => subtreeTexts(n, child))];
}

/** "name: description", or the name alone when the description only repeats it; underscores read as spaces. */
function labelWords(name: string, description?: string): string {
  const words = name.replaceAll('_', ' ');
  return description && description !== words ? `${words}: ${description}` : words;
}
