// decision-machine heads: the fitted decision heads of the configured store (DM_DATABASE_URL):
//   heads list [--json]     id, whose, capability, examples, live accuracy, model, date and decision
//   heads show HEAD_ID      the record as JSON, without its weights (their size in bytes instead)
//   heads remove HEAD_ID    requests asking that decision are read zero-shot again
//   heads rollback HEAD_ID  the version the last fit or refit replaced serves again
// (`heads refit` needs the model: fit.ts)
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { withStore } from '../store/store.js';
import { fail, table } from './output.js';

const USAGE =
  'usage: decision-machine heads list [--json] | show HEAD_ID | remove HEAD_ID | rollback HEAD_ID | refit SIGNATURE [--org ORG]';
const VERBS = ['list', 'show', 'remove', 'rollback'];

export async function headsCommand(args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  if (!VERBS.includes(verb ?? '')) return fail(USAGE);
  const id = positionals[0];
  if (verb !== 'list' && !id) return fail(`usage: decision-machine heads ${verb} HEAD_ID`);
  return withStore(loadConfig().databaseUrl, async (store) => {
    if (verb === 'list') {
      // Live: the head's decisions judged by corrections that came after it was fitted.
      const heads = await Promise.all(
        (await store.listHeads()).map(async (h) => ({ ...h, live: await store.headAccuracy(h.id, h.createdAt) })),
      );
      if (values.json) process.stdout.write(`${JSON.stringify(heads, null, 2)}\n`);
      else
        table(
          ['id', 'organization', 'capability', 'examples', 'live', 'model', 'created', 'decision'],
          heads.map((h) => [
            h.id,
            h.organization || '(deployment)',
            h.capability,
            String(h.examples),
            h.live.judged === 0 ? '-' : `${((100 * h.live.right) / h.live.judged).toFixed(1)}% of ${h.live.judged}`,
            h.model.slice(0, 12),
            h.createdAt,
            describeSignature(h.signature),
          ]),
        );
      return 0;
    }
    if (verb === 'rollback') {
      if (!(await store.rollbackHead(id!))) return fail(`no previous version of ${id}`);
      process.stderr.write(`${id}: the previous version serves again (replicas within 5 s)\n`);
      return 0;
    }
    if (verb === 'show') {
      const head = await store.findHead(id!);
      if (!head) return fail(`no head ${id}`);
      const { weights, signature, meta, ...rest } = head;
      const shown = { ...rest, signature: parsed(signature), meta: parsed(meta), weightsBytes: weights.byteLength };
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return 0;
    }
    if (!(await store.removeHead(id!))) return fail(`no head ${id}`);
    process.stderr.write(`removed ${id}; replicas stop applying it when they next read the store's heads\n`);
    return 0;
  });
}

/** A one-line summary of a signature's JSON: its labels, tree, scale, statement or field. */
export function describeSignature(signature: string): string {
  const s = parsed(signature);
  if (typeof s !== 'object' || s === null) return clip(signature);
  const { labels, tree, scale, statement, field } = s as Record<string, unknown>;
  if (Array.isArray(labels)) return clip(`${labels.length} labels: ${labels.map(name).join(', ')}`);
  if (isObject(labels)) return clip(`${Object.keys(labels).length} labels: ${Object.keys(labels).join(', ')}`);
  if (isObject(tree)) return clip(`tree of ${leaves(tree)} leaves: ${Object.keys(tree).join(', ')}`);
  if (Array.isArray(scale)) return clip(`scale of ${scale.length}: ${scale.map(name).join(' < ')}`);
  if (typeof statement === 'string') return clip(`"${statement}"`);
  if (isObject(field) && typeof field.name === 'string') return clip(`field ${field.name}`);
  return clip(signature);
}

// A tree maps a label to its description (a leaf) or to { description, labels? } (a leaf without labels).
function leaves(tree: Record<string, unknown>): number {
  return Object.values(tree).reduce<number>(
    (n, node) => n + (isObject(node) && isObject(node.labels) ? leaves(node.labels) : 1),
    0,
  );
}

function name(item: unknown): string {
  if (typeof item === 'string') return item;
  if (isObject(item) && typeof item.name === 'string') return item.name;
  return JSON.stringify(item);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON value of text that holds JSON, else the text itself. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function clip(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 3)}...`;
}
