// Arithmetic on embedding vectors (the sentence and speaker encoders' output).

/** The dot product: the cosine similarity of two unit vectors. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
