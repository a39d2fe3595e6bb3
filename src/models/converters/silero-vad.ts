// Silero VAD v5 (16 kHz) from its ONNX export to the model format of whisper.cpp's voice activity
// detector (read by whisper_vad_init_from_file_with_params; native/transcribe.cpp). The ONNX
// graph's initializers are exactly the 15 tensors whisper.cpp loads, named "model.*" where it
// says "_model.*": the STFT basis, four re-parametrised convolutions, the LSTM cell and the
// final 1x1 convolution. Tensors are written in whisper.cpp's order and types (F16 where its
// loader makes F16 tensors), so the output is the same for the same input.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toF16 } from './gguf-writer.js';

const SILERO_ONNX = 'silero_vad_16k_op15.onnx';

const GGML_MAGIC = 0x67676d6c;
const F32 = 0;
const F16 = 1;
const MODEL_TYPE = 'silero-16k';
const VERSION = [5, 1, 2];
const WINDOW_SAMPLES = 512; // 32 ms at 16 kHz per probability
const CONTEXT_SAMPLES = 64; // samples of the previous window each window sees

interface OnnxTensor {
  dims: number[];
  values: Float32Array;
}

/** The converted model as chunks: header, then each tensor record. */
export async function* sileroVadFromDir(dir: string): AsyncIterable<Uint8Array> {
  const t = onnxInitializers(await readFile(join(dir, SILERO_ONNX)));
  const get = (name: string): OnnxTensor => {
    const tensor = t.get(`model.${name}`);
    if (!tensor) throw new Error(`${SILERO_ONNX}: no tensor model.${name}`);
    return tensor;
  };
  const convs = [0, 1, 2, 3].map((i) => get(`encoder.${i}.reparam_conv.weight`)); // [out, in, kernel]
  const lstmIh = get('decoder.rnn.weight_ih'); // [4 x hidden, input]
  const lstmHh = get('decoder.rnn.weight_hh');
  const final = get('decoder.decoder.2.weight'); // [1, hidden, 1]
  yield int32s([GGML_MAGIC, MODEL_TYPE.length]);
  yield Buffer.from(MODEL_TYPE, 'ascii');
  yield int32s([
    ...VERSION,
    WINDOW_SAMPLES,
    CONTEXT_SAMPLES,
    convs.length,
    ...convs.flatMap((c) => [c.dims[1]!, c.dims[0]!, c.dims[2]!]), // in, out, kernel
    lstmIh.dims[1]!,
    lstmHh.dims[1]!,
    final.dims[1]!,
    final.dims[0]!,
  ]);

  // [name, type, ggml dimensions (innermost first)]
  const records: [string, number, number[]][] = [
    ['stft.forward_basis_buffer', F16, reversed(get('stft.forward_basis_buffer').dims)],
    ...convs.flatMap((c, i): [string, number, number[]][] => [
      [`encoder.${i}.reparam_conv.weight`, F16, reversed(c.dims)],
      [`encoder.${i}.reparam_conv.bias`, F32, [c.dims[0]!]],
    ]),
    ['decoder.rnn.weight_ih', F32, reversed(lstmIh.dims)],
    ['decoder.rnn.weight_hh', F32, reversed(lstmHh.dims)],
    ['decoder.rnn.bias_ih', F32, [lstmIh.dims[0]!]],
    ['decoder.rnn.bias_hh', F32, [lstmHh.dims[0]!]],
    ['decoder.decoder.2.weight', F16, [final.dims[1]!, final.dims[0]!]],
    ['decoder.decoder.2.bias', F32, [final.dims[0]!]],
  ];
  for (const [name, type, ne] of records) {
    const tensor = get(name);
    if (ne.reduce((a, b) => a * b, 1) !== tensor.values.length)
      throw new Error(`${SILERO_ONNX}: model.${name} has ${tensor.values.length} values`);
    const full = `_model.${name}`;
    yield int32s([ne.length, full.length, type, ...ne]);
    yield Buffer.from(full, 'ascii');
    yield type === F16
      ? toF16(tensor.values)
      : new Uint8Array(tensor.values.buffer, tensor.values.byteOffset, tensor.values.byteLength);
  }
}

function int32s(values: number[]): Uint8Array {
  const out = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => out.writeInt32LE(v, 4 * i));
  return out;
}

const reversed = (dims: number[]): number[] => [...dims].reverse();

// ---- the part of ONNX's protobuf schema read here --------------------------------------------
// ModelProto.graph = 7; GraphProto.initializer = 5 (TensorProto); TensorProto: dims = 1,
// data_type = 2 (1: FLOAT), float_data = 4, name = 8, raw_data = 9.

/** Float tensors stored as the graph's initializers, by name. */
export function onnxInitializers(model: Uint8Array): Map<string, OnnxTensor> {
  const graph = fields(model).find((f) => f.field === 7 && f.bytes);
  if (!graph?.bytes) throw new Error('not an ONNX model: no graph');
  const out = new Map<string, OnnxTensor>();
  for (const init of fields(graph.bytes)) {
    if (init.field !== 5 || !init.bytes) continue;
    let name = '';
    let type = 0;
    const dims: number[] = [];
    let values: Float32Array | undefined;
    for (const f of fields(init.bytes)) {
      if (f.field === 1 && f.bytes) dims.push(...varints(f.bytes));
      else if (f.field === 1) dims.push(f.value);
      else if (f.field === 2) type = f.value;
      else if (f.field === 8 && f.bytes) name = Buffer.from(f.bytes).toString('utf8');
      else if ((f.field === 9 || f.field === 4) && f.bytes) values = floats(f.bytes);
    }
    if (type !== 1) continue; // only float tensors are weights here
    const count = dims.reduce((a, b) => a * b, 1);
    if (!values || values.length !== count)
      throw new Error(`ONNX tensor ${name}: ${values?.length ?? 0} values for shape [${dims.join(', ')}]`);
    out.set(name, { dims, values });
  }
  return out;
}

interface Field {
  field: number;
  value: number; // varint and fixed fields
  bytes?: Uint8Array; // length-delimited fields
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  const r = new Reader(buf);
  while (!r.done) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        out.push({ field, value: r.varint() });
        break;
      case 1:
        r.skip(8);
        out.push({ field, value: 0 });
        break;
      case 2:
        out.push({ field, value: 0, bytes: r.bytes(r.varint()) });
        break;
      case 5:
        r.skip(4);
        out.push({ field, value: 0 });
        break;
      default:
        throw new Error(`protobuf: unsupported wire type ${key & 7}`);
    }
  }
  return out;
}

function varints(buf: Uint8Array): number[] {
  const r = new Reader(buf);
  const out: number[] = [];
  while (!r.done) out.push(r.varint());
  return out;
}

function floats(buf: Uint8Array): Float32Array {
  if (buf.length % 4) throw new Error('protobuf: float data is not a multiple of 4 bytes');
  return new Float32Array(Uint8Array.from(buf).buffer); // a copy: aligned, little-endian
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  varint(): number {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.at >= this.buf.length || shift > 63) throw new Error('protobuf: truncated varint');
      const b = this.buf[this.at++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  }

  skip(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('protobuf: truncated field');
    this.at += n;
  }

  bytes(n: number): Uint8Array {
    const start = this.at;
    this.skip(n);
    return this.buf.subarray(start, start + n);
  }
}
