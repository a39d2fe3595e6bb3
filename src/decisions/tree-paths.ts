// A classify-tree's tree as a fitted head sees it: one decision over the tree's leaf paths. The
// canonical tree (names sorted at every level, a leaf as its description) is what a head is stored
// under, so the same tree listed in any order is the same decision; a distribution over the leaf
// paths gives back the route's per-level results (each level's scores summed from the leaves
// under each label).
import type { Static } from '@sinclair/typebox';
import type { ClassifyTree as ClassifyTreeSchema } from '../api/classify-tree.js';
import type { ClassifyResult as ClassifyResultSchema } from '../api/classify.js';
import { argmax, confidence } from './distribution.js';

type ClassifyResult = Static<typeof ClassifyResultSchema>;
export type Tree = Static<typeof ClassifyTreeSchema>;
export type TreeNode = Exclude<Tree[string], string>;

/** The labels under a node, when it has any: the route descends into them (else it is a leaf). */
export function childrenOf(node: Tree[string] | undefined): Tree | undefined {
  return typeof node === 'object' && node.labels && Object.keys(node.labels).length > 0 ? node.labels : undefined;
}

/** The node's description ('' when it has none). */
export function descriptionOf(node: Tree[string]): string {
  return (typeof node === 'string' ? node : node.description) ?? '';
}

/** Names sorted at every level; a leaf as its description, an inner node as { description?, labels }. */
export function canonicalTree(tree: Tree): Tree {
  const names = Object.keys(tree).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(
    names.map((name) => {
      const node = tree[name]!;
      const children = childrenOf(node);
      const description = descriptionOf(node);
      if (!children) return [name, description];
      return [name, { ...(description ? { description } : {}), labels: canonicalTree(children) }];
    }),
  );
}

/** Every path from the top to a leaf, depth first in the tree's own order. */
export function leafPaths(tree: Tree, above: string[] = []): string[][] {
  return Object.entries(tree).flatMap(([name, node]) => {
    const children = childrenOf(node);
    return children ? leafPaths(children, [...above, name]) : [[...above, name]];
  });
}

/** Every label name and description of the tree, in characters: what a reading of it reads. */
export function treeChars(tree: Tree): number {
  return Object.entries(tree).reduce((n, [name, node]) => {
    const children = childrenOf(node);
    return n + name.length + descriptionOf(node).length + (children ? treeChars(children) : 0);
  }, 0);
}

/**
 * The route's result from P(leaf path): from the top, each level's labels scored by the mass of
 * the leaves under each one (given the label chosen above it: scores sum to 1 at every level,
 * keys in the request's order), descending into the best as the route does. The path's
 * probability, the product of its levels', is its leaf's.
 */
export function treeResultOf(tree: Tree, paths: string[][], p: number[]): { path: string[]; levels: ClassifyResult[] } {
  const path: string[] = [];
  const levels: ClassifyResult[] = [];
  for (let level: Tree | undefined = tree; level;) {
    const names = Object.keys(level);
    const mass = names.map((name) =>
      paths.reduce((s, leaf, i) => (prefixed(leaf, [...path, name]) ? s + p[i]! : s), 0),
    );
    const total = mass.reduce((a, b) => a + b, 0);
    const scores = mass.map((m) => (total > 0 ? m / total : 1 / names.length));
    const best = argmax(scores);
    const label = names[best]!;
    levels.push({
      label,
      probability: scores[best]!,
      confidence: confidence(scores),
      scores: Object.fromEntries(names.map((n, i) => [n, scores[i]!])),
    });
    path.push(label);
    level = childrenOf(level[label]);
  }
  return { path, levels };
}

function prefixed(leaf: string[], prefix: string[]): boolean {
  return prefix.length <= leaf.length && prefix.every((name, i) => leaf[i] === name);
}
