// CTranslate2 Whisper model -> whisper.cpp ggml model file, at set-up time.
//
// The registries carry Whisper only in CTranslate2's format (faster-whisper's model.bin). This
// writes the same model in the layout whisper.cpp loads (its models/convert-pt-to-ggml.py):
//   magic "ggml", 11 int32 hyper-parameters, the mel filter bank, the byte-level BPE vocabulary,
//   then every tensor as (n_dims, name length, type, dims innermost first, name, data).
// Matrices stay float16 as stored; vectors, the positional embeddings and the conv biases are
// float32, as whisper.cpp expects. CTranslate2 fuses the attention projections (q|k|v in self
// attention, k|v in cross attention); they are split here and the key bias (always zero in Whisper,
// which has none) is dropped. Mel filters and vocabulary come from openai-whisper's assets.
import { gunzipSync, inflateRawSync } from 'node:zlib';

const GGML_MAGIC = 0x67676d6c;
const F32 = 0;
const F16 = 1;
const CT2_FLOAT32 = 0;
const CT2_INT16 = 2;
const CT2_INT32 = 3;
const CT2_FLOAT16 = 4;

interface Ct2Variable {
  dims: number[];
  dtype: number;
  data: Buffer;
}

/** Variables of a CTranslate2 model.bin (binary version 6), aliases resolved. */
function readCt2(bin: Buffer): Map<string, Ct2Variable> {
  let at = 0;
  const u8 = () => bin.readUInt8(at++);
  const u16 = () => ((at += 2), bin.readUInt16LE(at - 2));
  const u32 = () => ((at += 4), bin.readUInt32LE(at - 4));
  const str = () => {
    const n = u16();
    at += n;
    return bin.toString('utf8', at - n, at - 1); // n counts the trailing NUL
  };
  const version = u32();
  if (version < 5 || version > 6)
    throw new Error(`CTranslate2 model binary version ${version} is not supported (5 or 6)`);
  const spec = str();
  if (spec !== 'WhisperSpec') throw new Error(`CTranslate2 model is a ${spec}, not a WhisperSpec`);
  u32(); // spec revision
  const vars = new Map<string, Ct2Variable>();
  for (let i = 0, n = u32(); i < n; i++) {
    const name = str();
    const dims = Array.from({ length: u8() }, u32);
    const dtype = u8();
    const bytes = u32();
    vars.set(name, { dims, dtype, data: bin.subarray(at, at + bytes) });
    at += bytes;
  }
  for (let i = 0, n = u32(); i < n; i++) {
    const alias = str();
    const target = vars.get(str());
    if (target) vars.set(alias, target);
  }
  if (at !== bin.length) throw new Error(`CTranslate2 model has ${bin.length - at} unexpected trailing bytes`);
  return vars;
}

/** The openai-whisper assets the converter needs, read from its source distribution (.tar.gz). */
export interface WhisperAssets {
  melFilters: Map<number, { rows: number; cols: number; data: Float32Array }>; // by mel count
  vocabularies: Map<string, Buffer[]>; // 'gpt2' | 'multilingual' -> tokens by rank
}

export function readWhisperAssets(sdist: Buffer): WhisperAssets {
  const files = untar(gunzipSync(sdist));
  const find = (suffix: string) => {
    for (const [name, data] of files) if (name.endsWith(suffix)) return data;
    throw new Error(`openai-whisper source has no ${suffix}`);
  };
  const melFilters = new Map<number, { rows: number; cols: number; data: Float32Array }>();
  for (const [name, data] of unzip(find('whisper/assets/mel_filters.npz'))) {
    const m = readNpyFloat32(data, name);
    melFilters.set(m.rows, m);
  }
  const vocabularies = new Map<string, Buffer[]>();
  for (const kind of ['gpt2', 'multilingual']) {
    const tokens: Buffer[] = [];
    for (const line of find(`whisper/assets/${kind}.tiktoken`).toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      const [b64, rank] = line.split(' ');
      if (Number(rank) !== tokens.length) throw new Error(`${kind}.tiktoken: ranks are not consecutive at ${rank}`);
      tokens.push(Buffer.from(b64, 'base64'));
    }
    vocabularies.set(kind, tokens);
  }
  return { melFilters, vocabularies };
}

/** Converts a CTranslate2 Whisper model; yields the ggml file in pieces (about the model's size in total). */
export function* ct2ToWhisperGgml(bin: Buffer, assets: WhisperAssets): Generator<Buffer> {
  const vars = readCt2(bin);
  const get = (name: string): Ct2Variable => {
    const v = vars.get(name);
    if (!v) throw new Error(`CTranslate2 model lacks ${name}`);
    return v;
  };
  const scalar = (name: string): number => {
    const v = get(name);
    if (v.dtype === CT2_INT16) return v.data.readInt16LE(0);
    if (v.dtype === CT2_INT32) return v.data.readInt32LE(0);
    throw new Error(`${name}: unexpected scalar type ${v.dtype}`);
  };
  const layers = (side: string) => {
    let n = 0;
    while (vars.has(`${side}/layer_${n}/ffn/linear_0/weight`)) n++;
    return n;
  };
  const [nVocab, nTextState] = get('decoder/embeddings/weight').dims;
  const [nAudioCtx, nAudioState] = get('encoder/position_encodings/encodings').dims;
  const nTextCtx = get('decoder/position_encodings/encodings').dims[0];
  const nMels = get('encoder/conv1/weight').dims[1];
  const hparams = [
    nVocab,
    nAudioCtx,
    nAudioState,
    scalar('encoder/num_heads'),
    layers('encoder'),
    nTextCtx,
    nTextState,
    scalar('decoder/num_heads'),
    layers('decoder'),
    nMels,
    F16,
  ];
  yield int32s([GGML_MAGIC, ...hparams]);

  const mel = assets.melFilters.get(nMels);
  if (!mel) throw new Error(`openai-whisper assets have no ${nMels}-band mel filters`);
  yield int32s([mel.rows, mel.cols]);
  yield Buffer.from(mel.data.buffer, mel.data.byteOffset, mel.data.byteLength);

  // 51865+ tokens: multilingual vocabulary; 51864: English-only (gpt2) vocabulary.
  const vocab = assets.vocabularies.get(nVocab >= 51865 ? 'multilingual' : 'gpt2')!;
  yield int32s([vocab.length]);
  for (const token of vocab) yield Buffer.concat([int32s([token.length]), token]);

  for (const t of tensors(get, layers('encoder'), layers('decoder'))) yield tensorRecord(t);
}

interface Tensor {
  name: string;
  shape: number[]; // outermost first, as in PyTorch
  values: Ct2Variable;
  rows?: [number, number]; // take rows [from, to) of the outermost dimension
  f32?: boolean; // store as float32 even when 2-D or more
}

function* tensors(get: (n: string) => Ct2Variable, nEncoder: number, nDecoder: number): Generator<Tensor> {
  const whole = (name: string, from: string, extra: Partial<Tensor> = {}): Tensor => {
    const values = get(from);
    return { name, shape: values.dims, values, ...extra };
  };
  const part = (name: string, from: string, index: number, count: number): Tensor => {
    const values = get(from);
    const rows = values.dims[0] / count;
    return { name, shape: [rows, ...values.dims.slice(1)], values, rows: [index * rows, (index + 1) * rows] };
  };
  const linear = (name: string, from: string, bias = true): Tensor[] => [
    whole(`${name}.weight`, `${from}/weight`),
    ...(bias ? [whole(`${name}.bias`, `${from}/bias`)] : []),
  ];
  const norm = (name: string, from: string): Tensor[] => [
    whole(`${name}.weight`, `${from}/gamma`),
    whole(`${name}.bias`, `${from}/beta`),
  ];
  // Fused projections: `count` equal blocks of rows; `skipBias` names blocks without a bias (keys).
  const fused = (names: string[], from: string, skipBias: string): Tensor[] =>
    names.flatMap((n, i) => [
      part(`${n}.weight`, `${from}/weight`, i, names.length),
      ...(n.endsWith(skipBias) ? [] : [part(`${n}.bias`, `${from}/bias`, i, names.length)]),
    ]);

  // PyTorch state_dict order, as openai-whisper's checkpoint lists the tensors.
  yield whole('encoder.positional_embedding', 'encoder/position_encodings/encodings', { f32: true });
  for (const c of ['conv1', 'conv2']) {
    yield whole(`encoder.${c}.weight`, `encoder/${c}/weight`);
    const bias = get(`encoder/${c}/bias`);
    yield { name: `encoder.${c}.bias`, shape: [bias.dims[0], 1], values: bias, f32: true };
  }
  for (let i = 0; i < nEncoder; i++) {
    const b = `encoder.blocks.${i}`;
    const l = `encoder/layer_${i}`;
    yield* fused([`${b}.attn.query`, `${b}.attn.key`, `${b}.attn.value`], `${l}/self_attention/linear_0`, '.key');
    yield* linear(`${b}.attn.out`, `${l}/self_attention/linear_1`);
    yield* norm(`${b}.attn_ln`, `${l}/self_attention/layer_norm`);
    yield* linear(`${b}.mlp.0`, `${l}/ffn/linear_0`);
    yield* linear(`${b}.mlp.2`, `${l}/ffn/linear_1`);
    yield* norm(`${b}.mlp_ln`, `${l}/ffn/layer_norm`);
  }
  yield* norm('encoder.ln_post', 'encoder/layer_norm');

  yield whole('decoder.positional_embedding', 'decoder/position_encodings/encodings', { f32: true });
  yield whole('decoder.token_embedding.weight', 'decoder/embeddings/weight');
  for (let i = 0; i < nDecoder; i++) {
    const b = `decoder.blocks.${i}`;
    const l = `decoder/layer_${i}`;
    yield* fused([`${b}.attn.query`, `${b}.attn.key`, `${b}.attn.value`], `${l}/self_attention/linear_0`, '.key');
    yield* linear(`${b}.attn.out`, `${l}/self_attention/linear_1`);
    yield* norm(`${b}.attn_ln`, `${l}/self_attention/layer_norm`);
    yield* linear(`${b}.cross_attn.query`, `${l}/attention/linear_0`);
    yield* fused([`${b}.cross_attn.key`, `${b}.cross_attn.value`], `${l}/attention/linear_1`, '.key');
    yield* linear(`${b}.cross_attn.out`, `${l}/attention/linear_2`);
    yield* norm(`${b}.cross_attn_ln`, `${l}/attention/layer_norm`);
    yield* linear(`${b}.mlp.0`, `${l}/ffn/linear_0`);
    yield* linear(`${b}.mlp.2`, `${l}/ffn/linear_1`);
    yield* norm(`${b}.mlp_ln`, `${l}/ffn/layer_norm`);
  }
  yield* norm('decoder.ln', 'decoder/layer_norm');
}

function tensorRecord(t: Tensor): Buffer {
  const { dtype, dims, data } = t.values;
  if (dtype !== CT2_FLOAT16 && dtype !== CT2_FLOAT32)
    throw new Error(`${t.name}: CTranslate2 type ${dtype} is not supported (float16/float32 only)`);
  const count = t.shape.reduce((a, b) => a * b, 1);
  const width = dtype === CT2_FLOAT16 ? 2 : 4;
  const rowBytes = (data.length / dims[0]) | 0;
  const src = t.rows ? data.subarray(t.rows[0] * rowBytes, t.rows[1] * rowBytes) : data;
  if (src.length !== count * width) throw new Error(`${t.name}: ${src.length} bytes for shape [${t.shape}]`);
  const asF32 = t.f32 || t.shape.length < 2;
  let out: Buffer;
  if (!asF32 && dtype === CT2_FLOAT16) out = src;
  else if (asF32 && dtype === CT2_FLOAT32) out = src;
  else if (asF32) out = f16ToF32(src);
  else out = f32ToF16(src);
  const name = Buffer.from(t.name, 'utf8');
  const header = int32s([t.shape.length, name.length, asF32 ? F32 : F16, ...[...t.shape].reverse()]);
  return Buffer.concat([header, name, out]);
}

function int32s(values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => (v > 0x7fffffff ? b.writeUInt32LE(v, 4 * i) : b.writeInt32LE(v, 4 * i)));
  return b;
}

function f16ToF32(src: Buffer): Buffer {
  const out = Buffer.alloc(src.length * 2);
  for (let i = 0; i < src.length / 2; i++) out.writeFloatLE(halfToFloat(src.readUInt16LE(2 * i)), 4 * i);
  return out;
}

function f32ToF16(src: Buffer): Buffer {
  const out = Buffer.alloc(src.length / 2);
  for (let i = 0; i < out.length / 2; i++) out.writeUInt16LE(floatToHalf(src.readFloatLE(4 * i)), 2 * i);
  return out;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

function floatToHalf(f: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, f);
  const x = view.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign; // underflow to zero (Whisper weights have no such tiny values that matter)
  if (exp >= 31) return sign | 0x7c00;
  const rounded = (exp << 10) | (mant >> 13);
  return sign | (rounded + ((mant >> 12) & 1)); // round half up on the dropped bits
}

// ---- the archive formats the assets come in -----------------------------------------------------

/** Regular files of a tar archive (ustar, with GNU long names). */
function untar(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, len: number) => header.toString('utf8', from, from + len).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    const body = tar.subarray(at + 512, at + 512 + size);
    longName = undefined;
    if (type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (type === '0') files.set(name, body);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Members of a zip archive held in memory (stored or deflated; no ZIP64). */
function unzip(zip: Buffer): Map<string, Buffer> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip archive');
  const members = new Map<string, Buffer>();
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0, n = zip.readUInt16LE(eocd + 10); i < n; i++) {
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLen = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    members.set(name, method === 8 ? inflateRawSync(raw) : raw);
    at += 46 + nameLen + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return members;
}

/** A 2-D little-endian float32 .npy array (C order). */
function readNpyFloat32(npy: Buffer, name: string): { rows: number; cols: number; data: Float32Array } {
  if (npy.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${name}: not a .npy array`);
  const headerLen = npy[6] === 1 ? npy.readUInt16LE(8) : npy.readUInt32LE(8);
  const headerStart = npy[6] === 1 ? 10 : 12;
  const header = npy.toString('latin1', headerStart, headerStart + headerLen);
  const shape = /'shape':\s*\((\d+),\s*(\d+)\)/.exec(header);
  if (!header.includes("'descr': '<f4'") || !header.includes("'fortran_order': False") || !shape)
    throw new Error(`${name}: expected a 2-D little-endian float32 array, got ${header.trim()}`);
  const [rows, cols] = [Number(shape[1]), Number(shape[2])];
  const body = npy.subarray(headerStart + headerLen, headerStart + headerLen + rows * cols * 4);
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = body.readFloatLE(4 * i);
  return { rows, cols, data };
}
