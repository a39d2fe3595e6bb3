// A reader for the GGUF header: magic, version, tensor count and the metadata key/values.
// It stops where the tensor infos begin and reads only the header bytes from the file
// (a few MB for a model with a large vocabulary), never the tensor data.
// Format: little-endian; strings are a u64 byte length followed by UTF-8 bytes.

import { open, type FileHandle } from 'node:fs/promises';

const GGUF_MAGIC = 'GGUF';

/** Value type ids from the GGUF specification. */
const TYPE_NAMES = [
  'uint8',
  'int8',
  'uint16',
  'int16',
  'uint32',
  'int32',
  'float32',
  'bool',
  'string',
  'array',
  'uint64',
  'int64',
  'float64',
] as const;
const T_STRING = 8;
const T_ARRAY = 9;
const FIXED_SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];

/** An array longer than the caller's limit: skipped over, only its element type and length kept. */
export interface GgufElidedArray {
  readonly elided: true;
  readonly type: string;
  readonly length: number;
}

/** 64-bit integers are numbers when they fit exactly, bigints otherwise. */
export type GgufValue = number | bigint | boolean | string | GgufValue[] | GgufElidedArray;

export interface GgufHeader {
  readonly version: number;
  readonly tensorCount: number;
  readonly metadata: Readonly<Record<string, GgufValue>>;
  /** Bytes from the start of the file to the end of the metadata (where tensor infos begin). */
  readonly metadataEnd: number;
}

export interface ReadGgufOptions {
  /** Arrays with more elements than this are returned as GgufElidedArray. Default 1024. */
  readonly arrayLimit?: number;
}

// Sanity limits so that a corrupt or foreign file fails fast instead of allocating gigabytes.
const MAX_HEADER_BYTES = 256 * 1024 * 1024;
const MAX_STRING_BYTES = 16 * 1024 * 1024;
const CHUNK = 1024 * 1024;

/** Sequential little-endian reads over a file, fetching CHUNK bytes at a time. */
class Cursor {
  private buf = Buffer.alloc(0);
  private bufStart = 0; // file offset of buf[0]
  pos = 0; // file offset of the next byte to read

  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
  ) {}

  private async need(n: number): Promise<Buffer> {
    const end = this.pos + n;
    if (end > MAX_HEADER_BYTES) throw new Error(`${this.path}: GGUF header larger than ${MAX_HEADER_BYTES} bytes`);
    if (end > this.bufStart + this.buf.length) {
      const keep = this.buf.subarray(this.pos - this.bufStart);
      const more = Buffer.alloc(Math.max(CHUNK, n - keep.length));
      const { bytesRead } = await this.fh.read(more, 0, more.length, this.bufStart + this.buf.length);
      this.buf = Buffer.concat([keep, more.subarray(0, bytesRead)]);
      this.bufStart = this.pos;
      if (end > this.bufStart + this.buf.length) {
        throw new Error(`${this.path}: truncated GGUF header (ends before byte ${end})`);
      }
    }
    const at = this.pos - this.bufStart;
    this.pos = end;
    return this.buf.subarray(at, at + n);
  }

  async u32(): Promise<number> {
    return (await this.need(4)).readUInt32LE(0);
  }

  async u64(): Promise<number> {
    const v = (await this.need(8)).readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${this.path}: implausible count ${v} in GGUF header`);
    return Number(v);
  }

  async string(): Promise<string> {
    const n = await this.u64();
    if (n > MAX_STRING_BYTES) throw new Error(`${this.path}: implausible string length ${n} in GGUF header`);
    return (await this.need(n)).toString('utf8');
  }

  async skip(n: number): Promise<void> {
    await this.need(n);
  }

  async scalar(type: number): Promise<number | bigint | boolean> {
    const b = await this.need(FIXED_SIZE[type]);
    switch (type) {
      case 0:
        return b.readUInt8(0);
      case 1:
        return b.readInt8(0);
      case 2:
        return b.readUInt16LE(0);
      case 3:
        return b.readInt16LE(0);
      case 4:
        return b.readUInt32LE(0);
      case 5:
        return b.readInt32LE(0);
      case 6:
        return b.readFloatLE(0);
      case 7:
        return b.readUInt8(0) !== 0;
      case 10:
        return exact(b.readBigUInt64LE(0));
      case 11:
        return exact(b.readBigInt64LE(0));
      default:
        return b.readDoubleLE(0); // 12
    }
  }
}

function exact(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

async function readValue(c: Cursor, type: number, arrayLimit: number, path: string): Promise<GgufValue> {
  if (type === T_STRING) return c.string();
  if (type !== T_ARRAY) {
    if (FIXED_SIZE[type] === undefined) throw new Error(`${path}: unknown GGUF value type ${type}`);
    return c.scalar(type);
  }
  const elemType = await c.u32();
  const length = await c.u64();
  if (TYPE_NAMES[elemType] === undefined) throw new Error(`${path}: unknown GGUF array element type ${elemType}`);
  if (length <= arrayLimit) {
    const out: GgufValue[] = [];
    for (let i = 0; i < length; i++) out.push(await readValue(c, elemType, arrayLimit, path));
    return out;
  }
  // Skip without materialising (a tokenizer vocabulary is ~150k strings).
  if (elemType === T_STRING) {
    for (let i = 0; i < length; i++) await c.skip(await c.u64());
  } else if (elemType === T_ARRAY) {
    for (let i = 0; i < length; i++) await readValue(c, elemType, 0, path);
  } else {
    await c.skip(FIXED_SIZE[elemType] * length);
  }
  return { elided: true, type: TYPE_NAMES[elemType], length };
}

/** Reads the GGUF header of `path`. Throws if the file is not GGUF v2/v3 or the header is damaged. */
export async function readGgufHeader(path: string, opts: ReadGgufOptions = {}): Promise<GgufHeader> {
  const arrayLimit = opts.arrayLimit ?? 1024;
  const fh = await open(path, 'r');
  try {
    const c = new Cursor(fh, path);
    const magic = await readMagic(fh);
    if (magic !== GGUF_MAGIC) throw new Error(`${path}: not a GGUF file (starts with ${JSON.stringify(magic)})`);
    await c.skip(4);
    const version = await c.u32();
    // Version 1 used 32-bit counts; a byte-swapped version means a big-endian file.
    if (version !== 2 && version !== 3)
      throw new Error(`${path}: unsupported GGUF version ${version} (expected 2 or 3, little-endian)`);
    const tensorCount = await c.u64();
    const kvCount = await c.u64();
    const metadata: Record<string, GgufValue> = {};
    for (let i = 0; i < kvCount; i++) {
      const key = await c.string();
      metadata[key] = await readValue(c, await c.u32(), arrayLimit, path);
    }
    return { version, tensorCount, metadata, metadataEnd: c.pos };
  } finally {
    await fh.close();
  }
}

async function readMagic(fh: FileHandle): Promise<string> {
  const b = Buffer.alloc(4);
  const { bytesRead } = await fh.read(b, 0, 4, 0);
  return b.subarray(0, bytesRead).toString('latin1');
}

/** Checks only the 4-byte magic; for files the user chose, which may be any GGUF model. */
export async function assertGgufMagic(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const magic = await readMagic(fh);
    if (magic !== GGUF_MAGIC) throw new Error(`${path}: not a GGUF file (starts with ${JSON.stringify(magic)})`);
  } finally {
    await fh.close();
  }
}

/** Checks magic, header integrity and `general.architecture`; for files the store assembled. */
export async function assertGgufArchitecture(path: string, architecture: string): Promise<void> {
  const { metadata } = await readGgufHeader(path, { arrayLimit: 0 });
  const got = metadata['general.architecture'];
  if (got !== architecture) {
    throw new Error(
      `${path}: GGUF general.architecture is ${JSON.stringify(got)}, expected ${JSON.stringify(architecture)}`,
    );
  }
}
