import { Type } from '@sinclair/typebox';
import { TextFields } from './common.js';
import { ClassifyResult, MAX_LABELS } from './classify.js';

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

/** Depth of a tree; requests deeper than MAX_TREE_DEPTH are refused (each level is a model call). */
export function treeDepth(tree: Record<string, unknown>): number {
  let depth = 0;
  for (const node of Object.values(tree)) {
    const labels =
      typeof node === 'object' && node !== null ? (node as { labels?: Record<string, unknown> }).labels : undefined;
    depth = Math.max(depth, labels ? treeDepth(labels) : 0);
  }
  return depth + 1;
}
