// What a head is stored under: the same decision asked with its labels or its tree in another
// order is one signature; a tree's levels are rebuilt from a distribution over its leaf paths as
// the route reports them.
import t from 'tap';
import { signatureOf, treeSignature, verifySignature } from '../../src/heads/signature.js';
import { canonicalTree, leafPaths, treeResultOf } from '../../src/decisions/tree-paths.js';

const TREE = {
  order: {
    description: 'orders and deliveries',
    labels: { damaged: 'arrived broken', late: { description: 'not arrived yet' }, wrong: 'another item' },
  },
  account: { description: 'the customer account', labels: { login: 'cannot sign in', data: 'privacy' } },
  other: { description: 'anything else', labels: {} },
};
// The same tree, keys in other orders at every level; a leaf written as { description } or as a string.
const SHUFFLED = {
  other: 'anything else',
  account: { labels: { data: 'privacy', login: 'cannot sign in' }, description: 'the customer account' },
  order: {
    labels: { wrong: 'another item', late: 'not arrived yet', damaged: { description: 'arrived broken' } },
    description: 'orders and deliveries',
  },
};

t.test('a tree is one signature however its labels are ordered', async (t) => {
  t.equal(treeSignature(SHUFFLED).id, treeSignature(TREE).id);
  t.equal(treeSignature(SHUFFLED).key, treeSignature(TREE).key);
  t.same(
    canonicalTree(SHUFFLED),
    {
      account: { description: 'the customer account', labels: { data: 'privacy', login: 'cannot sign in' } },
      order: {
        description: 'orders and deliveries',
        labels: { damaged: 'arrived broken', late: 'not arrived yet', wrong: 'another item' },
      },
      other: 'anything else',
    },
    'names sorted at every level; a node without labels under it is a leaf',
  );
  t.equal(signatureOf({ capability: 'classify-tree', tree: SHUFFLED }).id, treeSignature(TREE).id);
  const described = { ...TREE, order: { ...TREE.order, description: 'deliveries only' } };
  t.not(treeSignature(described).id, treeSignature(TREE).id, 'descriptions are part of the decision');
  const deeper = { ...TREE, other: { labels: { spam: 'spam' } } };
  t.not(treeSignature(deeper).id, treeSignature(TREE).id, 'so is the shape');
});

t.test("verify's signature is the field", async (t) => {
  t.equal(
    signatureOf({ capability: 'verify', field: { name: 'rent', description: '' } }).id,
    verifySignature('rent').id,
    'an empty description is none',
  );
  t.not(verifySignature('rent', 'per month').id, verifySignature('rent').id);
  t.not(verifySignature('rent').id, verifySignature('deposit').id);
});

t.test("a tree's levels from P(leaf path): summed under each label, descending into the best", async (t) => {
  const paths = leafPaths(canonicalTree(TREE));
  const p = (leaf: string[]) =>
    ({ 'order,damaged': 0.3, 'order,late': 0.1, 'order,wrong': 0.1, 'account,data': 0.35 })[leaf.join(',')] ?? 0.075;
  const probabilities = paths.map(p);
  t.ok(Math.abs(probabilities.reduce((a, b) => a + b, 0) - 1) < 1e-9);
  const { path, levels } = treeResultOf(TREE, paths, probabilities);
  t.same(path, ['order', 'damaged'], 'the heaviest group first, then its heaviest leaf (not the heaviest leaf)');
  t.same(Object.keys(levels[0]!.scores), ['order', 'account', 'other'], "the request's order");
  t.same(Object.keys(levels[1]!.scores), ['damaged', 'late', 'wrong']);
  t.ok(Math.abs(levels[0]!.scores.order! - 0.5) < 1e-9);
  t.ok(Math.abs(levels[0]!.scores.account! - 0.425) < 1e-9);
  t.ok(Math.abs(levels[1]!.probability - 0.6) < 1e-9, 'each level given the label above it');
  t.ok(Math.abs(levels[0]!.probability * levels[1]!.probability - 0.3) < 1e-9, "the path's probability is its leaf's");
  const top = treeResultOf(
    TREE,
    paths,
    paths.map((l) => (l[0] === 'other' ? 0.9 : 0.1 / 5)),
  );
  t.same(top.path, ['other'], 'a top-level leaf ends the path at the first level');
  t.equal(top.levels.length, 1);
});
