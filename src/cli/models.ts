// `decision-machine models ...`: pull, list and verify the models of the manifest.
// Results go to stdout, progress and errors to stderr. Exit codes: 0 ok, 1 a model failed
// (not available, or a hash mismatch), 2 usage error.

import { DEFAULT_DECISION_MODEL, DEFAULT_ENCODER_MODEL, findModel, MODELS, TEST_MODELS } from '../models/manifest.js';
import { cacheState, verifyCached } from '../models/cache.js';
import { cacheDirOf, resolveModel, storeOptions, type StoreOptions } from '../models/store.js';
import { loadConfig } from '../config.js';
import { table } from './output.js';

const USAGE = `usage: decision-machine models <command>
  pull [id...|--for test|--all]   fetch models into the cache (default: ${DEFAULT_DECISION_MODEL} and ${DEFAULT_ENCODER_MODEL})
  list                            show the manifest and what is cached
  verify [id...]                  re-hash cached models (default: every cached model)
environment: DM_CACHE_DIR (cache directory), DM_OFFLINE=1 (no URL downloads); serve pulls what it needs on start
`;

export async function modelsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const store = storeOptions(loadConfig());
  switch (sub) {
    case 'pull':
      return pull(rest, store);
    case 'list':
      return rest.length ? usage(`list takes no arguments`) : list(store);
    case 'verify':
      return verify(rest, store);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      return usage(`unknown command ${JSON.stringify(sub)}`);
  }
}

function usage(problem: string): number {
  process.stderr.write(`models: ${problem}\n${USAGE}`);
  return 2;
}

/** The ids named on the command line, or an error message. */
function pickIds(args: string[], defaults: readonly string[]): string[] | string {
  const ids: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--all') ids.push(...MODELS.map((m) => m.id));
    else if (a === '--for') {
      if (args[i + 1] !== 'test') return `--for takes "test"`;
      ids.push(...TEST_MODELS);
      i++;
    } else if (a.startsWith('-')) return `unknown option ${a}`;
    else if (!findModel(a)) return `unknown model ${JSON.stringify(a)}; known: ${MODELS.map((m) => m.id).join(', ')}`;
    else ids.push(a);
  }
  return [...new Set(ids.length ? ids : defaults)];
}

async function pull(args: string[], store: StoreOptions): Promise<number> {
  const ids = pickIds(args, [DEFAULT_DECISION_MODEL, DEFAULT_ENCODER_MODEL]);
  if (typeof ids === 'string') return usage(ids);
  const width = Math.max(...ids.map((id) => id.length));
  let failed = 0;
  for (const id of ids) {
    try {
      process.stdout.write(`${id.padEnd(width)}  ${await resolveModel(id, store)}\n`);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      failed++;
    }
  }
  return failed ? 1 : 0;
}

async function list(store: StoreOptions): Promise<number> {
  const rows: string[][] = [];
  for (const m of MODELS) {
    const state = await cacheState(m, cacheDirOf(store));
    const cached = state === 'verified' ? 'yes' : state === 'unverified' ? 'yes (not yet hashed)' : 'no';
    rows.push([
      m.id,
      m.role,
      `${(m.size / 1e6).toFixed(0)} MB`,
      m.licence,
      cached,
      m.id === DEFAULT_DECISION_MODEL ? '*' : '',
    ]);
  }
  table(['ID', 'ROLE', 'SIZE', 'LICENCE', 'CACHED', 'DEFAULT'], rows);
  process.stdout.write(`cache: ${cacheDirOf(store)}\n`);
  return 0;
}

async function verify(args: string[], store: StoreOptions): Promise<number> {
  const named = pickIds(args, []);
  if (typeof named === 'string') return usage(named);
  const ids = named.length ? named : MODELS.map((m) => m.id);
  const width = Math.max(...ids.map((id) => id.length));
  let bad = 0;
  for (const id of ids) {
    const r = await verifyCached(findModel(id)!, cacheDirOf(store));
    const name = id.padEnd(width);
    if (r.state === 'ok') process.stdout.write(`${name}  ok\n`);
    else if (r.state === 'mismatch') {
      process.stdout.write(`${name}  MISMATCH (${r.detail}); \`models pull ${id}\` replaces it\n`);
      bad++;
    } else {
      process.stdout.write(`${name}  not cached\n`);
      if (named.length) bad++; // a model the user named must be there
    }
  }
  return bad ? 1 : 0;
}
