// A decision head's arithmetic: multinomial logistic regression on the model's hidden state at the
// answer position, added to the zero-shot reading's log-probabilities (the offset), so a head with
// no weights decides exactly as the zero-shot reading does and the penalty pulls it there.
//
//   z_k = base_k + b_k + sum_j W_kj (h_j - mean_j) scale_j        p = softmax(z)
//
// Fitted in the examples' top principal components (at most RANK of them, by randomized SVD), so an
// iteration costs N x RANK x K rather than N x 1536 x K, then folded back to the hidden size. The
// penalty is lambda/2 |W|^2 with lambda relative to the examples' largest eigenvalue, so one grid
// fits every hidden size and scale; the components a few examples cannot tell apart are dropped.

import { argmax } from '../decisions/distribution.js';
import { seeded } from './random.js';

/** One labelled reading: the hidden state, the zero-shot log-probabilities, the right outcome. */
export interface Example {
  hidden: Float32Array;
  base: number[];
  label: number;
}

/** A fitted head, as applied. */
export interface HeadParams {
  outcomes: number;
  dim: number;
  mean: Float32Array; // dim
  scale: Float32Array; // dim: 1 / (std * sqrt(dim))
  weights: Float32Array; // outcomes x dim, row-major
  bias: Float32Array; // outcomes
}

/** The head's log-odds for one reading (softmax them for probabilities). */
export function headScores(p: HeadParams, hidden: Float32Array, base: number[]): number[] {
  const x = new Float32Array(p.dim);
  for (let j = 0; j < p.dim; j++) x[j] = (hidden[j]! - p.mean[j]!) * p.scale[j]!;
  return base.map((b, k) => {
    let z = b + p.bias[k]!;
    const row = k * p.dim;
    for (let j = 0; j < p.dim; j++) z += p.weights[row + j]! * x[j]!;
    return z;
  });
}

const RANK = 128;

/**
 * Examples standardised together (per-dimension mean and scale) and projected on their top
 * principal components: `features` (n x rank) are the examples' coordinates, `basis` (dim x rank,
 * orthonormal columns) maps a standardised hidden state to them.
 */
export class Projection {
  readonly mean: Float32Array;
  readonly scale: Float32Array;
  readonly basis: Float64Array;
  readonly features: Float64Array;
  readonly n: number;
  readonly dim: number;
  readonly rank: number;

  constructor(
    readonly examples: Example[],
    seed = 1,
    most = RANK,
  ) {
    const n = (this.n = examples.length);
    const d = (this.dim = examples[0]!.hidden.length);
    this.mean = new Float32Array(d);
    this.scale = new Float32Array(d);
    const sum = new Float64Array(d);
    const sq = new Float64Array(d);
    for (const e of examples)
      for (let j = 0; j < d; j++) {
        sum[j] += e.hidden[j]!;
        sq[j] += e.hidden[j]! * e.hidden[j]!;
      }
    for (let j = 0; j < d; j++) {
      const m = sum[j]! / n;
      this.mean[j] = m;
      this.scale[j] = 1 / (Math.sqrt(Math.max(sq[j]! / n - m * m, 0) + 1e-6) * Math.sqrt(d));
    }
    const x = new Float64Array(n * d); // standardised, row-major
    examples.forEach((e, i) => {
      for (let j = 0; j < d; j++) x[i * d + j] = (e.hidden[j]! - this.mean[j]!) * this.scale[j]!;
    });
    const r = (this.rank = Math.max(1, Math.min(most, n - 1, d)));
    // Randomized range finder with one power iteration: Q spans X's top r left singular vectors.
    const random = gaussian(seed);
    const omega = Float64Array.from({ length: d * r }, random);
    let q = orthonormal(multiply(x, n, d, omega, r), n, r);
    q = orthonormal(multiply(x, n, d, multiplyTransposed(x, n, d, q, r), r), n, r);
    // B = Q^T X (r x d); B B^T = U S^2 U^T; basis V = B^T U / S; features F = X V = Q U S.
    const b = transposeTimes(q, n, r, x, d);
    const { vectors, values } = symmetricEigen(gramOfRows(b, r, d), r);
    this.basis = new Float64Array(d * r);
    this.features = new Float64Array(n * r);
    for (let c = 0; c < r; c++) {
      const s = Math.sqrt(Math.max(values[c]!, 1e-12));
      for (let j = 0; j < d; j++) {
        let t = 0;
        for (let k = 0; k < r; k++) t += b[k * d + j]! * vectors[k * r + c]!;
        this.basis[j * r + c] = t / s;
      }
      for (let i = 0; i < n; i++) {
        let t = 0;
        for (let k = 0; k < r; k++) t += q[i * r + k]! * vectors[k * r + c]!;
        this.features[i * r + c] = t * s;
      }
    }
  }

  /** Weights over the components (outcomes x rank) as the head's weights over the hidden state. */
  params(fitted: FittedWeights, outcomes: number): HeadParams {
    const { dim: d, rank: r } = this;
    const weights = new Float32Array(outcomes * d);
    for (let k = 0; k < outcomes; k++)
      for (let j = 0; j < d; j++) {
        let t = 0;
        for (let c = 0; c < r; c++) t += this.basis[j * r + c]! * fitted.weights[k * r + c]!;
        weights[k * d + j] = t;
      }
    return { outcomes, dim: d, mean: this.mean, scale: this.scale, weights, bias: Float32Array.from(fitted.bias) };
  }
}

export interface FittedWeights {
  weights: Float64Array; // outcomes x rank
  bias: Float64Array;
}

/**
 * Fits the head on the examples `rows` of `p` with penalty `strength` (relative: lambda =
 * strength x the largest eigenvalue of the rows' covariance; Infinity fits the bias alone).
 * Nesterov-accelerated gradient descent, a fixed number of steps.
 */
export function fit(p: Projection, rows: number[], outcomes: number, strength: number, steps = 300): FittedWeights {
  const r = p.rank;
  const K = outcomes;
  const m = rows.length;
  const top = largestEigenvalue(p, rows);
  const lambda = Number.isFinite(strength) ? strength * top : 0;
  const step = Number.isFinite(strength) ? 1 / (0.5 * top + lambda + 1e-12) : 0;
  let w = new Float64Array(K * r);
  let b = new Float64Array(K);
  let prevW = w.slice();
  let prevB = b.slice();
  const z = new Float64Array(K);
  for (let t = 1; t <= steps; t++) {
    const mom = (t - 1) / (t + 2);
    const yw = w.map((v, i) => v + mom * (v - prevW[i]!));
    const yb = b.map((v, i) => v + mom * (v - prevB[i]!));
    const gw = new Float64Array(K * r);
    const gb = new Float64Array(K);
    for (const i of rows) {
      const f = i * r;
      let max = -Infinity;
      for (let k = 0; k < K; k++) {
        let v = p.examples[i]!.base[k]! + yb[k]!;
        const row = k * r;
        for (let c = 0; c < r; c++) v += yw[row + c]! * p.features[f + c]!;
        z[k] = v;
        if (v > max) max = v;
      }
      let sum = 0;
      for (let k = 0; k < K; k++) sum += z[k] = Math.exp(z[k]! - max);
      const label = p.examples[i]!.label;
      for (let k = 0; k < K; k++) {
        const g = (z[k]! / sum - (k === label ? 1 : 0)) / m;
        gb[k] += g;
        if (g === 0) continue;
        const row = k * r;
        for (let c = 0; c < r; c++) gw[row + c] += g * p.features[f + c]!;
      }
    }
    prevW = w;
    prevB = b;
    w = yw.map((v, i) => v - step * (gw[i]! + lambda * v));
    b = yb.map((v, k) => v - gb[k]!);
  }
  return { weights: w, bias: b };
}

/** The outcomes the fitted head picks for the examples `rows` of `p`. */
export function predict(p: Projection, fitted: FittedWeights, rows: number[]): number[] {
  const r = p.rank;
  return rows.map((i) => {
    const z = p.examples[i]!.base.map((v, k) => {
      let t = v + fitted.bias[k]!;
      for (let c = 0; c < r; c++) t += fitted.weights[k * r + c]! * p.features[i * r + c]!;
      return t;
    });
    return argmax(z);
  });
}

/** The largest eigenvalue of the covariance of the rows' features (power iteration). */
function largestEigenvalue(p: Projection, rows: number[]): number {
  const r = p.rank;
  let v = new Float64Array(r).fill(1 / Math.sqrt(r));
  let value = 0;
  for (let it = 0; it < 30; it++) {
    const w = new Float64Array(r);
    for (const i of rows) {
      let t = 0;
      for (let c = 0; c < r; c++) t += p.features[i * r + c]! * v[c]!;
      for (let c = 0; c < r; c++) w[c] += t * p.features[i * r + c]!;
    }
    for (let c = 0; c < r; c++) w[c] /= rows.length;
    value = Math.hypot(...w);
    if (value === 0) return 0;
    v = w.map((x) => x / value);
  }
  return value;
}

// Dense helpers over row-major Float64Arrays.

/** A (n x d) times B (d x r). */
function multiply(a: Float64Array, n: number, d: number, b: Float64Array, r: number): Float64Array {
  const out = new Float64Array(n * r);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) {
      const v = a[i * d + j]!;
      if (v === 0) continue;
      for (let c = 0; c < r; c++) out[i * r + c] += v * b[j * r + c]!;
    }
  return out;
}

/** A^T (d x n, A being n x d) times Q (n x r). */
function multiplyTransposed(a: Float64Array, n: number, d: number, q: Float64Array, r: number): Float64Array {
  const out = new Float64Array(d * r);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) {
      const v = a[i * d + j]!;
      for (let c = 0; c < r; c++) out[j * r + c] += v * q[i * r + c]!;
    }
  return out;
}

/** Q^T (r x n, Q being n x r) times X (n x d). */
function transposeTimes(q: Float64Array, n: number, r: number, x: Float64Array, d: number): Float64Array {
  const out = new Float64Array(r * d);
  for (let i = 0; i < n; i++)
    for (let c = 0; c < r; c++) {
      const v = q[i * r + c]!;
      for (let j = 0; j < d; j++) out[c * d + j] += v * x[i * d + j]!;
    }
  return out;
}

/** B B^T for B (r x d). */
function gramOfRows(b: Float64Array, r: number, d: number): Float64Array {
  const out = new Float64Array(r * r);
  for (let a = 0; a < r; a++)
    for (let c = a; c < r; c++) {
      let t = 0;
      for (let j = 0; j < d; j++) t += b[a * d + j]! * b[c * d + j]!;
      out[a * r + c] = out[c * r + a] = t;
    }
  return out;
}

/** Columns of Y (n x r) made orthonormal (modified Gram-Schmidt); a vanishing column becomes zero. */
function orthonormal(y: Float64Array, n: number, r: number): Float64Array {
  for (let c = 0; c < r; c++) {
    for (let k = 0; k < c; k++) {
      let dot = 0;
      for (let i = 0; i < n; i++) dot += y[i * r + c]! * y[i * r + k]!;
      for (let i = 0; i < n; i++) y[i * r + c] -= dot * y[i * r + k]!;
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += y[i * r + c]! ** 2;
    norm = Math.sqrt(norm);
    for (let i = 0; i < n; i++) y[i * r + c] = norm > 1e-10 ? y[i * r + c]! / norm : 0;
  }
  return y;
}

/** Eigenvalues (descending) and eigenvectors (columns) of a symmetric r x r matrix (cyclic Jacobi). */
function symmetricEigen(m: Float64Array, r: number): { values: Float64Array; vectors: Float64Array } {
  const a = m.slice();
  const v = new Float64Array(r * r);
  for (let i = 0; i < r; i++) v[i * r + i] = 1;
  for (let sweep = 0; sweep < 30; sweep++) {
    let off = 0;
    for (let p = 0; p < r; p++) for (let q = p + 1; q < r; q++) off += a[p * r + q]! ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < r; p++)
      for (let q = p + 1; q < r; q++) {
        const apq = a[p * r + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * r + q]! - a[p * r + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < r; k++) {
          const akp = a[k * r + p]!,
            akq = a[k * r + q]!;
          a[k * r + p] = c * akp - s * akq;
          a[k * r + q] = s * akp + c * akq;
        }
        for (let k = 0; k < r; k++) {
          const apk = a[p * r + k]!,
            aqk = a[q * r + k]!;
          a[p * r + k] = c * apk - s * aqk;
          a[q * r + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < r; k++) {
          const vkp = v[k * r + p]!,
            vkq = v[k * r + q]!;
          v[k * r + p] = c * vkp - s * vkq;
          v[k * r + q] = s * vkp + c * vkq;
        }
      }
  }
  const order = Array.from({ length: r }, (_, i) => i).sort((x, y) => a[y * r + y]! - a[x * r + x]!);
  const values = Float64Array.from(order, (i) => a[i * r + i]!);
  const vectors = new Float64Array(r * r);
  order.forEach((from, to) => {
    for (let k = 0; k < r; k++) vectors[k * r + to] = v[k * r + from]!;
  });
  return { values, vectors };
}

/** Standard normal draws from the seeded generator (Box-Muller; draws in (0, 1), never 0). */
function gaussian(seed: number): () => number {
  const next = seeded(seed);
  const open = () => (next() + 0.5) / 4294967296;
  return () => Math.sqrt(-2 * Math.log(open())) * Math.cos(2 * Math.PI * open());
}
