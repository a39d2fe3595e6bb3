// The model cache: a directory of verified files. A file counts once its size and sha256 match
// a pin of its manifest entry; `<file>.verified` (a stamp of size, mtime and sha256) spares the
// full hash on later starts. Candidate files are written to `<file>.<pid>.part`, hashed while
// written, checked and only then renamed into place, so the cache never holds a partial file.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { assertGgufArchitecture } from './gguf.js';
import { pinsOf, type ModelEntry } from './manifest.js';
import { Progress } from './progress.js';

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

/** Whether `size` and `sha256` are one of the entry's pins. */
function pinned(entry: ModelEntry, size: number, sha256?: string): boolean {
  return pinsOf(entry).some((p) => p.size === size && (sha256 === undefined || p.sha256 === sha256));
}

async function stampMatches(file: string, entry: ModelEntry, size: number, mtimeMs: number): Promise<boolean> {
  try {
    const s = JSON.parse(await readFile(stampPath(file), 'utf8')) as Partial<Stamp>;
    return s.size === size && pinned(entry, size, s.sha256) && s.mtimeMs === Math.floor(mtimeMs);
  } catch {
    return false;
  }
}

export type CacheState = 'verified' | 'unverified' | 'absent';

/** Cheap look at the cache for `models list`: no hashing. */
export async function cacheState(entry: ModelEntry, dir: string): Promise<CacheState> {
  const file = join(dir, entry.file);
  const st = await stat(file).catch(() => undefined);
  if (!st || !pinned(entry, st.size)) return 'absent';
  return (await stampMatches(file, entry, st.size, st.mtimeMs)) ? 'verified' : 'unverified';
}

/**
 * Full re-hash of a cached file for `models verify`. On a match the stamp is renewed; on a
 * mismatch the stamp is removed (the file is kept for inspection; the next resolve replaces it).
 */
export async function verifyCached(
  entry: ModelEntry,
  dir: string,
  out: NodeJS.WritableStream = process.stderr,
): Promise<{ state: 'ok' | 'missing' } | { state: 'mismatch'; detail: string }> {
  const file = join(dir, entry.file);
  const st = await stat(file).catch(() => undefined);
  if (!st) return { state: 'missing' };
  await rm(stampPath(file), { force: true });
  if (!pinned(entry, st.size)) return { state: 'mismatch', detail: `size ${st.size}, expected ${entry.size}` };
  const sha = await hashFile(file, new Progress(`${entry.id} (verifying)`, st.size, out, 'none'));
  if (!pinned(entry, st.size, sha)) return { state: 'mismatch', detail: `sha256 ${sha}, expected ${entry.sha256}` };
  await writeStamp(file, sha);
  return { state: 'ok' };
}

/** true on a verified hit; otherwise why the cache could not serve (a bad file is removed). */
export async function checkCached(entry: ModelEntry, file: string, out: NodeJS.WritableStream): Promise<true | string> {
  const st = await stat(file).catch(() => undefined);
  if (!st) return 'not cached';
  if (await stampMatches(file, entry, st.size, st.mtimeMs)) return true;
  let problem: string;
  if (!pinned(entry, st.size)) {
    problem = `cached file has ${st.size} bytes, expected ${entry.size}`;
  } else {
    const sha = await hashFile(file, new Progress(`${entry.id} (verifying cache)`, st.size, out, 'none'));
    if (pinned(entry, st.size, sha)) {
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

/** Temporaries are named `<file>.<pid>.part`, `.wheels` or `.quant`; drop those of dead processes. */
export async function removeStaleTemporaries(dir: string, file: string): Promise<void> {
  const re = new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.(part|wheels|quant)$`);
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

/** Appends to a new temporary file, hashing on the way and refusing to grow past the expected size. */
export class HashingWriter {
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
export async function install(
  entry: ModelEntry,
  target: string,
  progress: Progress,
  produce: (w: HashingWriter) => Promise<void>,
): Promise<void> {
  const part = `${target}.${process.pid}.part`;
  const w = await HashingWriter.create(part, Math.max(...pinsOf(entry).map((p) => p.size)), progress);
  try {
    try {
      await produce(w);
    } finally {
      await w.close();
      progress.finish();
    }
    if (!pinned(entry, w.bytes)) throw new Error(`got ${w.bytes} bytes, expected ${entry.size}`);
    const sha = w.hash.digest('hex');
    if (!pinned(entry, w.bytes, sha)) throw new Error(`sha256 mismatch: got ${sha}, expected ${entry.sha256}`);
    if (!entry.format) await assertGgufArchitecture(part, entry.architecture);
    await rename(part, target);
    await writeStamp(target, sha);
  } finally {
    await rm(part, { force: true });
  }
}
