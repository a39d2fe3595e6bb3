// The layout reads like the data path: no module of src/ imports itself back, through any chain
// of static imports (type-only imports included), and no folder imports a folder above it in
// FOLDER_ORDER, statically or by import(), so each folder can be read after the ones it uses
// (docs/layout.md, "Folder order"). And the tests import nothing from bench/ (statically or by
// import()): what a test needs lives in src/ or test/helpers/, and bench/ may use both.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../src');
const tests = resolve(here, '../../test');
const bench = resolve(here, '../../bench');

/**
 * The units of src/ (its folders, and its top-level files without `.ts`) in the order a request
 * meets them, from the entry points down to what everything uses: a unit may import only units
 * after it. The HTTP front reaches the gate, the gate the key store; the capabilities and audio
 * reach the engine, the engine the binding; models and config are read at start-up by all above.
 */
const FOLDER_ORDER = [
  'cli',
  'index',
  'bench',
  'service',
  'http',
  'feedback',
  'heads',
  'auth',
  'store',
  'audio',
  'decisions',
  'api',
  'metrics',
  'engine',
  'models',
  'config',
  'binding',
  'log',
  'errors',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `import ... from` and `export ... from` statements, type-only ones included. */
const STATIC = /^(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gms;
/** `import('...')` expressions: a module loaded when the code runs. */
const DYNAMIC = /\bimport\(\s*'(\.[^']+)'\s*\)/g;

/** Relative imports of a file, as absolute .ts paths: static ones, and with `dynamic` import() ones too. */
function importsOf(file: string, dynamic: boolean): string[] {
  const text = readFileSync(file, 'utf8');
  const found = (dynamic ? [STATIC, DYNAMIC] : [STATIC]).flatMap((p) => [...text.matchAll(p)].map((m) => m[1]!));
  return found.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

/**
 * Every cycle of static imports found by a depth-first walk, each as the chain of files that
 * closes it. An import() loads its module only when it runs, after its own module has loaded, so
 * it closes no cycle: store/store.ts opens store/sqlite.ts and store/postgres.ts that way, and
 * they import its types.
 */
function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f, false)]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const next of graph.get(f) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

/** The unit of a path relative to the tree's root: its first folder, or the file without `.ts`. */
function unitOf(path: string): string {
  const [first, ...rest] = path.split(sep);
  return rest.length > 0 ? first! : first!.replace(/\.ts$/, '');
}

/**
 * Imports, static or import(), from a unit to one before it in `order` ("from -> to", relative to
 * `tree`), and units not in `order`.
 */
function backEdges(tree: string, order: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of sources(tree)) {
    const from = relative(tree, file);
    const rank = order.indexOf(unitOf(from));
    if (rank < 0) {
      found.push(`${from}: ${unitOf(from)} is not in the folder order`);
      continue;
    }
    for (const target of importsOf(file, true)) {
      const to = relative(tree, target);
      const above = order.indexOf(unitOf(to)); // a unit not in the order is reported on its own files
      if (above >= 0 && above < rank) found.push(`${from} -> ${to}`);
    }
  }
  return found.sort();
}

/** Imports, static or import(), from a file under `from` to one under `to` ("from -> to", relative to `base`). */
function importsInto(from: string, to: string, base: string): string[] {
  return sources(from)
    .flatMap((file) =>
      importsOf(file, true)
        .filter((target) => target.startsWith(to + sep))
        .map((target) => `${relative(base, file)} -> ${relative(base, target)}`),
    )
    .sort();
}

t.test('src/ has no import cycle', async (t) => {
  const files = sources(root);
  t.ok(files.length > 50, `${files.length} modules read`);
  const found = cycles(files).map((c) => c.map((f) => relative(root, f)).join(' -> '));
  t.same(found, [], found.join('\n'));
});

t.test('no folder of src/ imports a folder above it', async (t) => {
  const found = backEdges(root, FOLDER_ORDER);
  t.same(found, [], found.join('\n'));
});

t.test('a back-edge fails the check, static or import() (fixture: engine imports http)', async (t) => {
  const tree = resolve(here, '../../test/fixtures/layout-back-edge');
  t.same(backEdges(tree, ['http', 'engine']), ['engine/load.ts -> http/reply.ts', 'engine/run.ts -> http/reply.ts']);
  t.same(backEdges(tree, ['engine', 'http']), [], 'the same tree passes with engine above http');
  t.same(backEdges(tree, ['engine']), ['http/reply.ts: http is not in the folder order']);
});

t.test('the tests import nothing from bench/', async (t) => {
  const found = importsInto(tests, bench, resolve(root, '..'));
  t.same(found, [], found.join('\n'));
});

t.test(
  'a test importing bench/ fails the check, static or import() (fixture: a test imports the harness)',
  async (t) => {
    const tree = resolve(here, '../../test/fixtures/layout-bench-import');
    t.same(importsInto(join(tree, 'test'), join(tree, 'bench'), tree), [
      'test/load.ts -> bench/harness.ts',
      'test/text.ts -> bench/harness.ts',
    ]);
  },
);
