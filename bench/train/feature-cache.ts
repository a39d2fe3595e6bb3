// What the readout benches' model read of each item, kept outside git so a refit resumes where the
// last one stopped: ~/.cache/decision-machine-1/features/<name>/ holds one JSON line per item
// (meta.jsonl, everything but its hidden states) and the items' hidden-state rows (hidden.bin,
// float32, in the same order). A read cut off before its rows were written is dropped on opening.
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Cached {
  id: string;
  hidden: Float32Array;
}

export class FeatureCache<T extends Cached> {
  readonly items = new Map<string, T>();
  private readonly metaFile: string;
  private readonly hiddenFile: string;

  /** `floats`: how many values of hidden state an item of this meta has. */
  constructor(name: string, floats: (meta: Omit<T, 'hidden'>) => number) {
    const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'decision-machine-1', 'features', name);
    mkdirSync(dir, { recursive: true });
    this.metaFile = join(dir, 'meta.jsonl');
    this.hiddenFile = join(dir, 'hidden.bin');
    const lines = existsSync(this.metaFile) ? readFileSync(this.metaFile, 'utf8').split('\n').filter(Boolean) : [];
    const hidden = existsSync(this.hiddenFile) ? readFileSync(this.hiddenFile) : Buffer.alloc(0);
    let at = 0;
    for (const line of lines) {
      const meta = JSON.parse(line) as Omit<T, 'hidden'>;
      const bytes = floats(meta) * 4;
      if (at + bytes > hidden.length) break; // a read cut off before its rows were written
      const rows = new Float32Array(hidden.buffer.slice(hidden.byteOffset + at, hidden.byteOffset + at + bytes));
      this.items.set(meta.id, { ...meta, hidden: rows } as T);
      at += bytes;
    }
    if (existsSync(this.hiddenFile) && statSync(this.hiddenFile).size !== at)
      writeFileSync(this.hiddenFile, hidden.subarray(0, at));
    if (lines.length !== this.items.size)
      writeFileSync(
        this.metaFile,
        lines
          .slice(0, this.items.size)
          .map((l) => l + '\n')
          .join(''),
      );
  }

  /** Appends an item read: its rows first, so a meta line never names rows that are not there. */
  add(item: T): void {
    const { hidden, ...meta } = item;
    appendFileSync(this.hiddenFile, Buffer.from(hidden.buffer, hidden.byteOffset, hidden.byteLength));
    appendFileSync(this.metaFile, JSON.stringify(meta) + '\n');
    this.items.set(item.id, item);
  }
}
