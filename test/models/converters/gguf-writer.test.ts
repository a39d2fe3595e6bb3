// The GGUF writer: what it writes reads back with the project's reader, deterministically, and
// Q8_0 blocks hold the values within half a quantisation step.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GGML_F32, GGML_Q8_0, ggufChunks, toQ8_0 } from '../../../src/models/converters/gguf-writer.js';
import { readGgufHeader } from '../../../src/models/gguf.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-gguf-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const values = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) * 3);
const file = (): Buffer =>
  Buffer.concat([
    ...ggufChunks(
      {
        'general.architecture': { type: 'string', value: 'bert' },
        'bert.block_count': { type: 'uint32', value: 6 },
        'bert.attention.layer_norm_epsilon': { type: 'float32', value: 0.5 },
        'bert.attention.causal': { type: 'bool', value: false },
        'tokenizer.ggml.tokens': { type: 'array', items: 'string', value: ['[PAD]', '\u2581hello', 'lo'] },
        'tokenizer.ggml.token_type': { type: 'array', items: 'int32', value: [3, 1, 1] },
      },
      [
        { name: 'a.weight', dims: [32, 2], type: GGML_Q8_0, data: toQ8_0(values) },
        { name: 'a.bias', dims: [3], type: GGML_F32, data: new Uint8Array(new Float32Array([1, 2, 3]).buffer) },
      ],
    ),
  ]);

t.test('metadata reads back; tensors padded to the alignment; same input, same bytes', async (t) => {
  const bytes = file();
  t.same(bytes, file(), 'deterministic');
  const path = join(dir, 'm.gguf');
  writeFileSync(path, bytes);
  const h = await readGgufHeader(path);
  t.equal(h.version, 3);
  t.equal(h.tensorCount, 2);
  t.equal(h.metadata['general.architecture'], 'bert');
  t.equal(h.metadata['bert.block_count'], 6);
  t.equal(h.metadata['bert.attention.layer_norm_epsilon'], 0.5);
  t.equal(h.metadata['bert.attention.causal'], false);
  t.same(h.metadata['tokenizer.ggml.tokens'], ['[PAD]', '\u2581hello', 'lo']);
  t.same(h.metadata['tokenizer.ggml.token_type'], [3, 1, 1]);
  t.equal(bytes.length % 32, 0, 'every tensor padded to the 32-byte alignment');
});

t.test('Q8_0: 34 bytes per 32 values, each within half a step of the original', async (t) => {
  const q = toQ8_0(values);
  t.equal(q.length, 68);
  const view = new DataView(q.buffer);
  for (let b = 0; b < 2; b++) {
    const half = view.getUint16(b * 34, true);
    const d = half === 0 ? 0 : (1 + (half & 0x3ff) / 1024) * 2 ** (((half >> 10) & 0x1f) - 15);
    for (let i = 0; i < 32; i++) {
      const back = view.getInt8(b * 34 + 2 + i) * d;
      t.ok(Math.abs(back - values[b * 32 + i]!) <= d * 0.51 + 1e-3, `value ${b * 32 + i}`);
    }
  }
  t.throws(() => toQ8_0(new Float32Array(31)), /multiple of 32/);
});
