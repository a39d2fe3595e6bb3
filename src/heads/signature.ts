// What defines a decision, whatever text it is asked of: the capability and its definition (the
// label set with its descriptions, the tree, the scale, the statement with its hints, verify's
// field). Requests with the same signature ask the same decision, so one head, fitted on examples
// of that signature, serves them all. The label set is a set: listed in any order, it is the same
// signature; so is a tree whose labels are listed in another order at any level.
import { createHash } from 'node:crypto';
import type { Label } from '../decisions/labels.js';
import type { Definition } from '../decisions/head-decider.js';
import { canonicalTree, leafPaths, type Tree } from '../decisions/tree-paths.js';

export type { Definition } from '../decisions/head-decider.js';
export const HEAD_CAPABILITIES = ['yes-no', 'classify', 'classify-tree', 'rate', 'verify'] as const;

export interface Signature {
  definition: Definition;
  /** Canonical JSON of the definition: what a head is stored under. */
  key: string;
  /** 'head_' and 16 hex digits of the key's SHA-256. */
  id: string;
  /**
   * The outcomes a head chooses among, in a fixed order: false/true (yes-no, verify), labels by
   * name, leaf paths (the JSON of each path's labels, in the canonical tree's order), levels.
   */
  outcomes: string[];
}

function signature(definition: Definition, outcomes: string[]): Signature {
  const key = JSON.stringify(definition);
  return { definition, key, id: signatureId(key), outcomes };
}

/** 'head_' and 16 hex digits of the key's SHA-256. */
export function signatureId(key: string): string {
  return `head_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/**
 * The id of the head an organization fitted for `sig` ('': the deployment's, the signature's own
 * id): two organizations teaching the same decision keep two heads.
 */
export function headId(sig: Signature, organization: string): string {
  if (organization === '') return sig.id;
  return `head_${createHash('sha256').update(`${sig.key}\n${organization}`).digest('hex').slice(0, 16)}`;
}

export function yesNoSignature(statement: string, whenTrue?: string, whenFalse?: string): Signature {
  return signature(
    {
      capability: 'yes-no',
      statement,
      ...(whenTrue ? { when_true: whenTrue } : {}),
      ...(whenFalse ? { when_false: whenFalse } : {}),
    },
    ['false', 'true'],
  );
}

export function classifySignature(labels: Label[]): Signature {
  const sorted = [...labels]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((l) => (l.description ? { name: l.name, description: l.description } : { name: l.name }));
  return signature(
    { capability: 'classify', labels: sorted },
    sorted.map((l) => l.name),
  );
}

export function rateSignature(scale: string[]): Signature {
  return signature({ capability: 'rate', scale: [...scale] }, [...scale]);
}

/** A tree's signature: the canonical tree; its outcomes are its leaf paths. */
export function treeSignature(tree: Tree): Signature {
  const canonical = canonicalTree(tree);
  return signature(
    { capability: 'classify-tree', tree: canonical },
    leafPaths(canonical).map((path) => JSON.stringify(path)),
  );
}

/** verify's signature: the field, its name and description (the value is asked per text). */
export function verifySignature(name: string, description?: string): Signature {
  return signature({ capability: 'verify', field: { name, ...(description ? { description } : {}) } }, [
    'false',
    'true',
  ]);
}

/** The signature of a decision's definition (as decisions state it to their HeadDecider). */
export function signatureOf(d: Definition): Signature {
  if (d.capability === 'yes-no') return yesNoSignature(d.statement, d.when_true, d.when_false);
  if (d.capability === 'classify') return classifySignature(d.labels);
  if (d.capability === 'classify-tree') return treeSignature(d.tree);
  if (d.capability === 'verify') return verifySignature(d.field.name, d.field.description);
  return rateSignature(d.scale);
}

/** A short description for listings: the statement, the field, or the number of labels, leaves or levels. */
export function describeDefinition(d: Definition): string {
  if (d.capability === 'yes-no') return JSON.stringify(d.statement);
  if (d.capability === 'classify') return `${d.labels.length} labels`;
  if (d.capability === 'classify-tree') return `tree of ${leafPaths(d.tree).length} leaves`;
  if (d.capability === 'verify') return `field ${JSON.stringify(d.field.name)}`;
  return `${d.scale.length} levels`;
}
