import { Type, type Static } from '@sinclair/typebox';
import { ERRORS } from '../errors.js';
import { TextFields } from './common.js';
import { ClassifyResult, MAX_LABELS } from './classify.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

export const MAX_TREE_DEPTH = 8;

/** name -> description, or name -> { description, labels } one level down (a node without labels is a leaf). */
export const ClassifyTree = Type.Recursive(
  (Tree) =>
    Type.Record(
      Type.String({ pattern: '^.+$' }),
      Type.Union([
        Type.String(),
        Type.Object(
          { description: Type.Optional(Type.String()), labels: Type.Optional(Tree) },
          { additionalProperties: false },
        ),
      ]),
      { minProperties: 1, maxProperties: MAX_LABELS, additionalProperties: false },
    ),
  { $id: 'ClassifyTree' },
);

export const ClassifyTreeRequest = Type.Object(
  { ...TextFields, tree: ClassifyTree },
  { $id: 'ClassifyTreeRequest', additionalProperties: false },
);

export const ClassifyTreeLevel = Type.Composite([
  ClassifyResult,
  Type.Object({ input_chars: Type.Integer(), input_tokens: Type.Integer(), inference_ms: Type.Integer() }),
]);

export const ClassifyTreeResult = Type.Object(
  {
    path: Type.Array(Type.String(), { description: 'the winning label per level, top to bottom' }),
    label: Type.String({ description: 'the deepest label' }),
    probability: Type.Number({ minimum: 0, maximum: 1, description: 'the product of the level probabilities' }),
    confidence: Type.Number({ minimum: 0, maximum: 1, description: 'the product of the level confidences' }),
    levels: Type.Array(ClassifyTreeLevel),
  },
  { $id: 'ClassifyTreeResult' },
);

/** Refuses a tree deeper than MAX_TREE_DEPTH levels: each level is one model call. */
function checkDepth(input: Static<typeof ClassifyTreeRequest>): void {
  if (treeDepth(input.tree) > MAX_TREE_DEPTH)
    throw ERRORS.invalidRequest(`tree: deeper than ${MAX_TREE_DEPTH} levels (each level is one model call)`);
}

/** Depth of a tree: 1 for a flat label set. */
function treeDepth(tree: Record<string, unknown>): number {
  let depth = 0;
  for (const node of Object.values(tree)) {
    const labels =
      typeof node === 'object' && node !== null ? (node as { labels?: Record<string, unknown> }).labels : undefined;
    depth = Math.max(depth, labels ? treeDepth(labels) : 0);
  }
  return depth + 1;
}

export const classifyTreeApi = capabilityApi({
  name: 'classify-tree',
  summary: 'Which path through a label tree fits the text?',
  request: ClassifyTreeRequest,
  response: results(ClassifyTreeResult),
  check: checkDepth,
  example: {
    text: EXAMPLE_TEXT,
    tree: { money: { description: 'payments', labels: { paid: 'paid', refund: 'refunds' } }, other: 'anything else' },
  },
});
