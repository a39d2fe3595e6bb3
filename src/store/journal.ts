// The usage journal: an append-only file of rows the store could not take yet, so that an
// answer delivered while the database is away is still billed once it is back.
//
// Contract:
// - append() resolves once its row is on disk (written and fdatasync'ed; concurrent appends share
//   one write and one sync). It rejects, writing nothing, when the file would pass `maxBytes` or
//   the disk refuses the write (the bytes of a failed write are cut off again).
// - next() reads undelivered rows in the order they were appended; delivered() marks them so.
//   Delivered rows are not rewritten: the file is emptied once every row in it is delivered.
// - One file per Journal (one per process in the service), named `usage-<store>-<pid>-<nonce>`,
//   where <store> is a hash of the store's address: rows are only replayed into their own store.
//   Opening adopts the files a dead process left for the same store (kill -9, a crash, a stop
//   while the database was away), to replay them first. A row may be read and delivered again
//   after a crash; the store skips it by its entryId (Store.recordUsage), so it is written once.
// - Each line is `<crc32 hex> <json>\n`; a line that does not check (the torn end of a write a
//   crash interrupted) ends the file's rows.
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { UsageEntry } from './store.js';

/** Files of Journals open in this process (a file of this pid not among them is a dead incarnation's). */
const OPEN_HERE = new Set<string>();
const NAME = /^usage-([0-9a-f]{16})-(\d+)-([0-9a-f]{8})(-\d+)?\.journal$/;
const READ_BYTES = 256 * 1024;

export class JournalFullError extends Error {
  override name = 'JournalFullError';
}

/** A batch of rows read from the journal, and where reading goes on after it. */
export interface Batch {
  rows: UsageEntry[];
  file: string;
  end: number;
}

interface Waiter {
  line: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Journal {
  /** Undelivered rows, from every file (adopted ones included). */
  rows = 0;
  /** Bytes of the files not yet delivered. */
  bytes = 0;
  private handle: FileHandle | undefined;
  private size = 0; // bytes of our file on disk, every one in a complete, synced line
  private readonly cursors = new Map<string, number>(); // file -> delivered up to this offset
  private readonly adopted: string[] = []; // dead processes' files, oldest first, then ours
  private waiting: Waiter[] = [];
  private writing = false;
  private lock: Promise<unknown> = Promise.resolve();
  private refusedAt = -Infinity; // performance.now() of the last write that failed

  private constructor(
    readonly dir: string,
    readonly file: string,
    private readonly maxBytes: number,
  ) {}

  /** Opens this process's journal for the store at `storeUrl` (redacted or not: its host, port and database name). */
  static open(dir: string, storeUrl: string, maxBytes: number): Journal {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK); // refused at start-up, not at the first outage
    const store = createHash('sha256').update(storeIdentity(storeUrl)).digest('hex').slice(0, 16);
    const file = join(dir, `usage-${store}-${process.pid}-${randomBytes(4).toString('hex')}.journal`);
    OPEN_HERE.add(file);
    const journal = new Journal(dir, file, maxBytes);
    journal.adopt(store);
    return journal;
  }

  /** True when every row appended so far has been delivered. */
  get empty(): boolean {
    return this.rows === 0 && this.waiting.length === 0 && !this.writing;
  }

  /** True when a write failed (full, or the disk refused) in the last `ms`. */
  refusedRecently(ms: number): boolean {
    return performance.now() - this.refusedAt < ms;
  }

  /** Appends one row; resolves when it is durable. */
  append(entry: UsageEntry): Promise<void> {
    const json = JSON.stringify(entry);
    const line = Buffer.from(`${crc32(json).toString(16).padStart(8, '0')} ${json}\n`);
    return new Promise((resolve, reject) => {
      this.waiting.push({ line, resolve, reject });
      if (!this.writing) void this.exclusive(() => this.write());
    });
  }

  /** Up to `max` undelivered rows, oldest first; none when everything is delivered. */
  async next(max: number): Promise<Batch | undefined> {
    for (const file of [...this.adopted, this.file]) {
      const from = this.cursors.get(file) ?? 0;
      const to = file === this.file ? this.size : statSync(file).size;
      if (from >= to) continue;
      const rows: UsageEntry[] = [];
      const end = await readRows(file, from, to, max, rows);
      if (rows.length > 0) return { rows, file, end };
      // Nothing that checks from here on: the torn end of a dead process's last write.
      this.bytes -= to - from;
      this.cursors.set(file, to);
      if (file !== this.file) this.finish(file);
    }
    return undefined;
  }

  /** The batch is in the store: its rows are not read again (after a crash they may be, and are skipped there). */
  async delivered(batch: Batch): Promise<void> {
    const from = this.cursors.get(batch.file) ?? 0;
    this.cursors.set(batch.file, batch.end);
    this.rows -= batch.rows.length;
    this.bytes -= batch.end - from;
    if (batch.file !== this.file) {
      if (batch.end >= statSync(batch.file).size) this.finish(batch.file);
      return;
    }
    // Our file, all delivered: empty it, unless rows were appended meanwhile.
    await this.exclusive(async () => {
      if (this.cursors.get(this.file) !== this.size || !this.handle) return;
      await this.handle.truncate(0);
      await this.handle.datasync();
      this.size = 0;
      this.cursors.set(this.file, 0);
    });
  }

  /**
   * Waits for appends under way; removes our file when it holds nothing undelivered. What is
   * left (ours and adopted files) is adopted by the next journal opened for the store.
   */
  async close(): Promise<void> {
    await this.exclusive(async () => {
      await this.handle?.close();
      this.handle = undefined;
      if (this.size === (this.cursors.get(this.file) ?? 0)) {
        try {
          unlinkSync(this.file);
        } catch {
          // never created
        }
      }
      for (const file of [this.file, ...this.adopted]) OPEN_HERE.delete(file);
    });
  }

  // Writes every waiting line in one write and one sync, until none waits.
  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting;
        this.waiting = [];
        const bytes = Buffer.concat(batch.map((w) => w.line));
        try {
          if (this.size + bytes.length > this.maxBytes)
            throw new JournalFullError(`usage journal ${this.file} is full (${this.maxBytes} bytes)`);
          this.handle ??= await open(this.file, 'a+');
          const { bytesWritten } = await this.handle.write(bytes, 0, bytes.length, this.size);
          // A full disk can take part of a write without an error: that is a refusal too.
          if (bytesWritten !== bytes.length)
            throw Object.assign(new Error(`ENOSPC: no space left on device, write ${this.file}`), { code: 'ENOSPC' });
          await this.handle.datasync();
        } catch (err) {
          this.refusedAt = performance.now();
          await this.handle?.truncate(this.size).catch(() => {}); // nothing half-written stays
          for (const w of batch) w.reject(err as Error);
          continue;
        }
        this.size += bytes.length;
        this.rows += batch.length;
        this.bytes += bytes.length;
        for (const w of batch) w.resolve();
      }
    } finally {
      this.writing = false;
    }
  }

  // Every change of our file's length, one at a time.
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work);
    this.lock = run.catch(() => {});
    return run;
  }

  // Takes over the files of dead processes for the same store, least recently written first:
  // each is renamed to a name of ours first, so two processes starting together cannot both take one.
  private adopt(store: string): void {
    const own = this.file.replace(/\.journal$/, '');
    const candidates = readdirSync(this.dir).flatMap((name) => {
      const m = NAME.exec(name);
      const path = join(this.dir, name);
      if (!m || m[1] !== store || alive(path, Number(m[2]))) return [];
      const modified = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
      return modified === undefined ? [] : [{ name, modified }]; // gone: another process took it
    });
    for (const { name } of candidates.sort((a, b) => a.modified - b.modified)) {
      const taken = `${own}-${this.adopted.length}.journal`;
      try {
        renameSync(join(this.dir, name), taken);
      } catch {
        continue; // another process took it first
      }
      OPEN_HERE.add(taken);
      this.adopted.push(taken);
      this.bytes += statSync(taken).size;
      this.rows += countRows(taken);
    }
  }

  private finish(file: string): void {
    unlinkSync(file);
    OPEN_HERE.delete(file);
    this.adopted.splice(this.adopted.indexOf(file), 1);
    this.cursors.delete(file);
  }
}

// Host, port and database of a store URL (no user or password); a file path as it is.
function storeIdentity(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol.startsWith('postgres') ? `postgres://${u.host}${u.pathname}` : url;
  } catch {
    return url;
  }
}

// A file's writer is alive when it is a Journal of this process, or another process of that pid
// runs (a reused pid only delays the replay until that process ends).
function alive(file: string, pid: number): boolean {
  if (OPEN_HERE.has(file)) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Reads complete, checking lines from `from` (stopping before `to`, or after `max` rows) into
// `rows`; returns the offset after the last one read.
async function readRows(file: string, from: number, to: number, max: number, rows: UsageEntry[]): Promise<number> {
  const handle = await open(file, 'r');
  try {
    let offset = from;
    let carry = Buffer.alloc(0);
    while (offset + carry.length < to && rows.length < max) {
      const chunk = Buffer.alloc(Math.min(READ_BYTES, to - offset - carry.length));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset + carry.length);
      if (bytesRead === 0) break;
      let text = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      for (let nl = text.indexOf(10); nl >= 0 && rows.length < max; nl = text.indexOf(10)) {
        const entry = parseLine(text.subarray(0, nl).toString('utf8'));
        if (!entry) return offset;
        rows.push(entry);
        offset += nl + 1;
        text = text.subarray(nl + 1);
      }
      carry = text;
    }
    return offset;
  } finally {
    await handle.close();
  }
}

function parseLine(line: string): UsageEntry | undefined {
  const json = line.slice(9);
  if (line[8] !== ' ' || crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return undefined;
  return JSON.parse(json) as UsageEntry;
}

// Rows of an adopted file that check (for the metrics), read once at start-up.
function countRows(file: string): number {
  let n = 0;
  for (const line of readFileSync(file, 'utf8').split('\n').slice(0, -1)) {
    if (!parseLine(line)) break;
    n++;
  }
  return n;
}
