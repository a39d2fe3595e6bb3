// Reads one F32 tensor of a GGUF (version 2 or 3) file: enough of the format for tests to check
// the engine's numbers against the model's own weights.
import { open } from 'node:fs/promises';

const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;
const F32 = 0;
const HEADER_BYTES = 64 << 20; // metadata and tensor infos (a 150k-token vocabulary is a few MB)

/** The F32 tensor `name` of the GGUF file at `path`, all its elements in file order. */
export async function readF32Tensor(path: string, name: string): Promise<Float32Array> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await file.read(head, 0, HEADER_BYTES, 0);
    let at = 0;
    const u32 = () => ((at += 4), head.readUInt32LE(at - 4));
    const u64 = () => ((at += 8), Number(head.readBigUInt64LE(at - 8)));
    const str = () => {
      const n = u64();
      return ((at += n), head.toString('utf8', at - n, at));
    };
    const skip = (type: number) => {
      if (type === STRING) {
        const n = u64();
        at += n;
      } else if (type === ARRAY) {
        const items = u32();
        const n = u64();
        if (items === STRING || items === ARRAY) for (let i = 0; i < n; i++) skip(items);
        else at += n * SCALAR_BYTES[items]!;
      } else at += SCALAR_BYTES[type]!;
    };
    if (head.toString('latin1', 0, 4) !== 'GGUF') throw new Error(`${path} is not a GGUF file`);
    at = 8;
    const tensors = u64();
    const kvs = u64();
    let alignment = 32;
    for (let i = 0; i < kvs; i++) {
      const key = str();
      const type = u32();
      if (key === 'general.alignment') alignment = u32();
      else skip(type);
    }
    let found: { elements: number; offset: number } | undefined;
    for (let i = 0; i < tensors; i++) {
      const tensor = str();
      let elements = 1;
      for (let d = u32(); d > 0; d--) elements *= u64();
      const type = u32();
      const offset = u64();
      if (tensor === name) {
        if (type !== F32) throw new Error(`${name} is not an F32 tensor (ggml type ${type})`);
        found = { elements, offset };
      }
    }
    if (at > bytesRead) throw new Error(`${path}: the tensor infos end past the first ${HEADER_BYTES} bytes`);
    if (!found) throw new Error(`${path} has no tensor ${name}`);
    const data = Math.ceil(at / alignment) * alignment + found.offset;
    const out = new Float32Array(found.elements);
    await file.read(new Uint8Array(out.buffer), 0, out.byteLength, data);
    return out;
  } finally {
    await file.close();
  }
}
