import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertGgufArchitecture, assertGgufMagic, readGgufHeader } from '../../src/models/gguf.js';

// ---- a tiny GGUF writer, enough to build headers byte by byte ----------------------------------

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64 = (n: number | bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};
const str = (s: string): Buffer => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([u64(b.length), b]);
};

type Value = string | number | bigint | boolean | { elem: number; items: Value[] };

function value(type: number, v: Value): Buffer {
  switch (type) {
    case 1: {
      const b = Buffer.alloc(1);
      b.writeInt8(v as number);
      return b;
    }
    case 4:
      return u32(v as number);
    case 6: {
      const b = Buffer.alloc(4);
      b.writeFloatLE(v as number);
      return b;
    }
    case 7:
      return Buffer.from([v ? 1 : 0]);
    case 8:
      return str(v as string);
    case 9: {
      const { elem, items } = v as { elem: number; items: Value[] };
      return Buffer.concat([u32(elem), u64(items.length), ...items.map((x) => value(elem, x))]);
    }
    case 10:
      return u64(v as number | bigint);
    default:
      throw new Error(`test writer lacks type ${type}`);
  }
}

function gguf(kvs: [string, number, Value][], version = 3): Buffer {
  return Buffer.concat([
    Buffer.from('GGUF'),
    u32(version),
    u64(2), // tensor count
    u64(kvs.length),
    ...kvs.map(([k, type, v]) => Buffer.concat([str(k), u32(type), value(type, v)])),
  ]);
}

const vocab = Array.from({ length: 5000 }, (_, i) => `tok${i}`);
const header = gguf([
  ['general.architecture', 8, 'qwen2'],
  ['general.name', 8, 'Tiny Test Model — ünïcode'],
  ['qwen2.block_count', 4, 24],
  ['qwen2.rope.freq_base', 6, 1000000],
  ['tokenizer.ggml.add_bos_token', 7, false],
  ['general.big', 10, 2n ** 60n],
  ['general.small_u64', 10, 1234],
  ['general.negative', 1, -5],
  ['general.tags', 9, { elem: 8, items: ['a', 'b'] }],
  ['tokenizer.ggml.tokens', 9, { elem: 8, items: vocab }],
]);

const dir = await mkdtemp(join(tmpdir(), 'dm-gguf-test-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

// Tensor infos and data follow the metadata; the reader must stop before them.
const model = join(dir, 'model.gguf');
await writeFile(model, Buffer.concat([header, Buffer.alloc(64 * 1024, 0xab)]));

t.test('reads version, tensor count and typed metadata', async (t) => {
  const h = await readGgufHeader(model);
  t.equal(h.version, 3);
  t.equal(h.tensorCount, 2);
  t.equal(h.metadataEnd, header.length, 'stops where the tensor infos begin');
  const m = h.metadata;
  t.equal(m['general.architecture'], 'qwen2');
  t.equal(m['general.name'], 'Tiny Test Model — ünïcode');
  t.equal(m['qwen2.block_count'], 24);
  t.equal(m['qwen2.rope.freq_base'], 1000000);
  t.equal(m['tokenizer.ggml.add_bos_token'], false);
  t.equal(m['general.big'], 2n ** 60n, 'u64 beyond 2^53 stays exact as a bigint');
  t.equal(m['general.small_u64'], 1234, 'u64 that fits is a plain number');
  t.equal(m['general.negative'], -5);
  t.same(m['general.tags'], ['a', 'b']);
});

t.test('long arrays are summarised unless asked for', async (t) => {
  const short = await readGgufHeader(model);
  t.same(short.metadata['tokenizer.ggml.tokens'], { elided: true, type: 'string', length: 5000 });
  const full = await readGgufHeader(model, { arrayLimit: Infinity });
  const tokens = full.metadata['tokenizer.ggml.tokens'] as string[];
  t.equal(tokens.length, 5000);
  t.equal(tokens[4999], 'tok4999');
  t.equal(full.metadataEnd, short.metadataEnd);
});

t.test('architecture check names what it found and what it wanted', async (t) => {
  await t.resolves(assertGgufArchitecture(model, 'qwen2'));
  await t.rejects(assertGgufArchitecture(model, 'llama'), {
    message: /general\.architecture is "qwen2", expected "llama"/,
  });
});

t.test('foreign and damaged files are refused with a reason', async (t) => {
  const text = join(dir, 'readme.gguf');
  await writeFile(text, 'hello, not a model');
  await t.rejects(readGgufHeader(text), { message: /not a GGUF file \(starts with "hell"\)/ });
  await t.rejects(assertGgufMagic(text), { message: /not a GGUF file/ });

  const empty = join(dir, 'empty.gguf');
  await writeFile(empty, '');
  await t.rejects(assertGgufMagic(empty), { message: /not a GGUF file/ });

  const cut = join(dir, 'cut.gguf');
  await writeFile(cut, header.subarray(0, header.length - 100));
  await t.rejects(readGgufHeader(cut), { message: /truncated GGUF header/ });

  const v1 = join(dir, 'v1.gguf');
  await writeFile(v1, gguf([['general.architecture', 8, 'llama']], 1));
  await t.rejects(readGgufHeader(v1), { message: /unsupported GGUF version 1/ });

  await t.resolves(assertGgufMagic(model));
});
