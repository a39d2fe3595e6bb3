// A GGUF version 3 writer for converters: metadata key/values, then tensor infos, then the
// tensor data, each tensor aligned to 32 bytes. Output is deterministic (same input, same bytes),
// so a converted file can be pinned by sha256 like a downloaded one.

export type GgufScalar =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string };

export type GgufMetadata =
  GgufScalar | { type: 'array'; items: 'string'; value: string[] } | { type: 'array'; items: 'int32'; value: number[] };

/** ggml tensor types a converter writes. */
export const GGML_F32 = 0;
export const GGML_Q8_0 = 8;

export interface GgufTensor {
  name: string;
  /** ggml order: ne[0] is the contiguous dimension (a PyTorch [out, in] weight is [in, out]). */
  dims: number[];
  type: typeof GGML_F32 | typeof GGML_Q8_0;
  data: Uint8Array;
}

const ALIGNMENT = 32;
const TYPE_ID = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;

class Bytes {
  private chunks: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  concat(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(out: Bytes, v: GgufMetadata): void {
  out.u32(TYPE_ID[v.type]);
  switch (v.type) {
    case 'uint32':
      return out.u32(v.value);
    case 'int32':
      return out.i32(v.value);
    case 'float32': {
      const b = Buffer.alloc(4);
      b.writeFloatLE(v.value);
      return out.push(b);
    }
    case 'bool':
      return out.push(Buffer.from([v.value ? 1 : 0]));
    case 'string':
      return out.str(v.value);
    case 'array':
      out.u32(TYPE_ID[v.items]);
      out.u64(v.value.length);
      for (const item of v.value) {
        if (v.items === 'string') out.str(item as string);
        else out.i32(item as number);
      }
  }
}

/** The whole file's chunks in order: header, then each tensor's data with padding. */
export function* ggufChunks(metadata: Record<string, GgufMetadata>, tensors: GgufTensor[]): Generator<Uint8Array> {
  const head = new Bytes();
  head.push(Buffer.from('GGUF', 'ascii'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    head.str(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of tensors) {
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    offset += padded(t.data.length);
  }
  const header = head.concat();
  yield header;
  yield new Uint8Array(padded(header.length) - header.length);
  for (const t of tensors) {
    yield t.data;
    yield new Uint8Array(padded(t.data.length) - t.data.length);
  }
}

const padded = (n: number): number => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

/** float32 values to IEEE half precision, round to nearest even. */
export function toF16(values: Float32Array): Uint8Array {
  const out = new Uint16Array(values.length);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < values.length; i++) {
    f[0] = values[i]!;
    const x = u[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    const mant = x & 0x7fffff;
    let h: number;
    if (exp === 0xff) h = sign | 0x7c00 | (mant ? 0x200 : 0);
    else {
      const e = exp - 127 + 15;
      if (e >= 0x1f) h = sign | 0x7c00;
      else if (e <= 0) {
        if (e < -10) h = sign;
        else {
          const m = mant | 0x800000;
          const shift = 14 - e;
          let half = m >>> shift;
          const rest = m & ((1 << shift) - 1);
          const mid = 1 << (shift - 1);
          if (rest > mid || (rest === mid && half & 1)) half++;
          h = sign | half;
        }
      } else {
        h = sign | (e << 10) | (mant >>> 13);
        const rest = mant & 0x1fff;
        if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++;
      }
    }
    out[i] = h;
  }
  return new Uint8Array(out.buffer);
}

/**
 * float32 rows to ggml's Q8_0: blocks of 32 values, each an F16 scale (max |x| / 127) followed by
 * 32 int8 values rounded half away from zero, as ggml's reference quantizer does.
 */
export function toQ8_0(values: Float32Array): Uint8Array {
  if (values.length % 32 !== 0) throw new Error('Q8_0 needs a multiple of 32 values');
  const blocks = values.length / 32;
  const out = new Uint8Array(blocks * 34);
  const scale = new Float32Array(1);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(values[b * 32 + i]!));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    scale[0] = d;
    out.set(toF16(scale), b * 34);
    for (let i = 0; i < 32; i++) {
      const x = values[b * 32 + i]! * id;
      out[b * 34 + 2 + i] = (Math.sign(x) * Math.round(Math.abs(x))) & 0xff;
    }
  }
  return out;
}
