// The ONNX reader behind the Silero VAD converter: initializers with their names, shapes and
// float values, whether the values are raw bytes or packed floats; other tensor types skipped.
import t from 'tap';
import { onnxInitializers } from '../../../src/models/converters/silero-vad.js';

// Protobuf encoding, as much as the test needs.
const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  return [...out, n];
};
const field = (n: number, bytes: Uint8Array | number[]): number[] => [
  ...varint(n * 8 + 2),
  ...varint(bytes.length),
  ...bytes,
];
const number = (n: number, value: number): number[] => [...varint(n * 8), ...varint(value)];
const floats = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
const text = (s: string) => [...Buffer.from(s)];

t.test('reads float initializers from raw data and from packed floats', async (t) => {
  const raw = [
    ...field(1, [...varint(2), ...varint(3)]),
    ...number(2, 1),
    ...field(8, text('model.a')),
    ...field(9, floats([1, 2, 3, 4, 5, 6])),
  ];
  const packed = [...number(1, 2), ...number(2, 1), ...field(8, text('model.b')), ...field(4, floats([0.5, -0.5]))];
  const int64s = [...number(1, 1), ...number(2, 7), ...field(8, text('shape')), ...field(9, [8, 0, 0, 0, 0, 0, 0, 0])];
  const graph = [...field(1, text('node')), ...field(5, raw), ...field(5, packed), ...field(5, int64s)];
  const model = Uint8Array.from([...number(1, 8), ...field(7, graph)]);
  const got = onnxInitializers(model);
  t.same([...got.keys()], ['model.a', 'model.b'], 'the int64 tensor is skipped');
  t.same(got.get('model.a')!.dims, [2, 3]);
  t.same(Array.from(got.get('model.a')!.values), [1, 2, 3, 4, 5, 6]);
  t.same(got.get('model.b')!.dims, [2]);
  t.same(Array.from(got.get('model.b')!.values), [0.5, -0.5]);
});

t.test('a truncated or mis-shaped model is an error, not a crash', async (t) => {
  const tensor = [...number(1, 4), ...number(2, 1), ...field(8, text('model.c')), ...field(9, floats([1, 2]))];
  t.throws(() => onnxInitializers(Uint8Array.from(field(7, field(5, tensor)))), /2 values for shape \[4\]/);
  const whole = Uint8Array.from(field(7, field(5, tensor)));
  t.throws(() => onnxInitializers(whole.subarray(0, whole.length - 3)), /truncated/);
  t.throws(() => onnxInitializers(Uint8Array.from([1, 2, 3])), /protobuf|ONNX/);
});
