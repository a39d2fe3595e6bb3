// What defines a decision, whatever text it is asked of: the capability and its definition (the
// label set with its descriptions, the scale, the statement with its hints). Requests with the same
// signature ask the same decision, so one head, fitted on examples of that signature, serves them
// all. The label set is a set: listed in any order, it is the same signature.
import { createHash } from 'node:crypto';
import type { Label } from '../decisions/labels.js';
import type { Definition } from '../decisions/learned.js';

export type { Definition } from '../decisions/learned.js';
export const HEAD_CAPABILITIES = ['yes-no', 'classify', 'rate'] as const;

export interface Signature {
  definition: Definition;
  /** Canonical JSON of the definition: what a head is stored under. */
  key: string;
  /** 'head_' and 16 hex digits of the key's SHA-256. */
  id: string;
  /** The outcomes a head chooses among, in a fixed order: false/true, labels by name, levels. */
  outcomes: string[];
}

function signature(definition: Definition, outcomes: string[]): Signature {
  const key = JSON.stringify(definition);
  const id = `head_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
  return { definition, key, id, outcomes };
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

/** The signature of a decision's definition (as decisions state it to Learned). */
export function signatureOf(d: Definition): Signature {
  if (d.capability === 'yes-no') return yesNoSignature(d.statement, d.when_true, d.when_false);
  if (d.capability === 'classify') return classifySignature(d.labels);
  return rateSignature(d.scale);
}

/** A short description for listings: the statement, or the number of labels or levels. */
export function describeDefinition(d: Definition): string {
  if (d.capability === 'yes-no') return JSON.stringify(d.statement);
  if (d.capability === 'classify') return `${d.labels.length} labels`;
  return `${d.scale.length} levels`;
}
