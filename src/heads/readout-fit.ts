// The fit of the option readout (src/decisions/option-readout.ts): a conditional logit over each
// item's options, s = a z + b e + w . h~ (h~: the option's hidden state centred over the item's
// options and divided by its spread over the training rows), by full-batch Adam from the zero-shot
// reading (a = 1, b = 0, w = 0), with an L2 penalty pulling every parameter back toward it. The
// probabilities it states come out of the same fit: there is no second calibration step.
// `decaying` lets the Adam step fall linearly to zero over the steps: at a fixed step every
// coordinate keeps moving by about the step, and over 1536 coordinates that jitter alone shifts
// scores by nats (on the rate features at penalty 100, the fixed step ended at |v| 0.92 and 28% of
// its own training items against 52% zero-shot; the decaying step ends at the anchor). The rate
// readout is fitted so; the option and yes-no readouts' recorded figures came from the fixed step.
// The readouts shipped in src/decisions/readouts/ are fitted with it by bench/train/.

/** What the model read of one item (Classify.optionReadings), and its gold option's index. */
export interface Item {
  id: string;
  source: string;
  gold: number;
  z: number[];
  end: number[];
  dim: number;
  hidden: Float32Array; // options x dim
}

const RATE = 0.05;

/** How the fit steps: `steps` full-batch Adam steps, the step size fixed or decaying linearly to zero. */
export interface Schedule {
  steps: number;
  decaying: boolean;
}
export const FIXED: Schedule = { steps: 300, decaying: false };
export const DECAYING: Schedule = { steps: 400, decaying: true };

function centred(xs: number[]): number[] {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  return xs.map((x) => x - mean);
}

function softmax(s: number[]): number[] {
  const max = Math.max(...s);
  const e = s.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** Each item's options' hidden states, centred over the item's options. */
function centredRows(item: Item): Float64Array[] {
  const k = item.z.length;
  const mean = new Float64Array(item.dim);
  for (let o = 0; o < k; o++) for (let d = 0; d < item.dim; d++) mean[d]! += item.hidden[o * item.dim + d]! / k;
  return Array.from({ length: k }, (_, o) => {
    const row = new Float64Array(item.dim);
    for (let d = 0; d < item.dim; d++) row[d] = item.hidden[o * item.dim + d]! - mean[d]!;
    return row;
  });
}

export interface FittedReadout {
  /** The parameters option-readout.ts reads: v = w / spread, so s = a z + b e + v . h. */
  parameters(): { a: number; b: number; v: number[] };
  probabilities(item: Item): number[];
  accuracy(items: Item[]): number;
  zeroShotAccuracy(items: Item[]): number;
}

const argmax = (xs: number[]) => xs.indexOf(Math.max(...xs));

export function fitReadout(items: Item[], penalty: number, schedule: Schedule = FIXED): FittedReadout {
  const dim = items[0]!.dim;
  const rows = items.map(centredRows);
  const ends = items.map((x) => centred(x.end));
  const spread = new Float64Array(dim);
  let n = 0;
  for (const row of rows.flat()) {
    n++;
    for (let d = 0; d < dim; d++) spread[d]! += row[d]! * row[d]!;
  }
  for (let d = 0; d < dim; d++) spread[d] = Math.sqrt(spread[d]! / n) + 1e-6;
  // theta = [a, b, w...]; the penalty pulls it toward [1, 0, 0...].
  const theta = new Float64Array(dim + 2);
  theta[0] = 1;
  const anchor = (j: number) => (j === 0 ? 1 : 0);
  const m = new Float64Array(dim + 2);
  const v2 = new Float64Array(dim + 2);
  // An option's score from its zero-shot reading, its centred end-of-reply reading and centred row.
  const score = (z: number, end: number, row: Float64Array) => {
    let s = theta[0]! * z + theta[1]! * end;
    for (let d = 0; d < dim; d++) s += (theta[d + 2]! * row[d]!) / spread[d]!;
    return s;
  };
  for (let t = 1; t <= schedule.steps; t++) {
    const step = schedule.decaying ? RATE * (1 - (t - 1) / schedule.steps) : RATE;
    const g = new Float64Array(dim + 2);
    items.forEach((item, i) => {
      const p = softmax(item.z.map((z, o) => score(z, ends[i]![o]!, rows[i]![o]!)));
      p.forEach((pk, o) => {
        const r = (pk - (o === item.gold ? 1 : 0)) / items.length;
        g[0]! += r * item.z[o]!;
        g[1]! += r * ends[i]![o]!;
        const row = rows[i]![o]!;
        for (let d = 0; d < dim; d++) g[d + 2]! += (r * row[d]!) / spread[d]!;
      });
    });
    for (let j = 0; j < dim + 2; j++) {
      const gj = g[j]! + penalty * (theta[j]! - anchor(j));
      m[j] = 0.9 * m[j]! + 0.1 * gj;
      v2[j] = 0.999 * v2[j]! + 0.001 * gj * gj;
      theta[j]! -= (step * (m[j]! / (1 - 0.9 ** t))) / (Math.sqrt(v2[j]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  const parameters = () => ({
    a: theta[0]!,
    b: theta[1]!,
    v: Array.from({ length: dim }, (_, d) => Number((theta[d + 2]! / spread[d]!).toPrecision(6))),
  });
  const probabilities = (item: Item) => {
    const end = centred(item.end);
    const row = centredRows(item);
    return softmax(item.z.map((z, o) => score(z, end[o]!, row[o]!)));
  };
  return {
    parameters,
    probabilities,
    accuracy: (xs) => xs.filter((x) => argmax(probabilities(x)) === x.gold).length / xs.length,
    zeroShotAccuracy: (xs) => xs.filter((x) => argmax(x.z) === x.gold).length / xs.length,
  };
}
