// Speaker diarization: which voice says each word of a transcript. The number of speakers is
// found, not given.
//
//   1. Speech runs: the transcript's words, split where a pause of `pauseSeconds` or more falls
//      between two words (a pause is where turns usually change). The word spans are the voice
//      activity: no separate VAD runs.
//   2. Segments: runs cut evenly into pieces of at most `segmentSeconds`, so a turn change
//      without a pause spoils one short piece, not a whole run.
//   3. Each segment's embedding is the normalised mean of GE2E embeddings of 1.6 s windows
//      sliding over it (resemblyzer's embed_utterance; native/speaker_encoder.cpp).
//   4. Agglomerative clustering of the segments by cosine similarity, average linkage weighted
//      by duration, merging while the two closest clusters are at least `threshold` alike; then
//      clusters with too little speech join the nearest voice, voices that sound alike once
//      pooled merge, and segments move to the nearest voice (speakersOf).
//   5. Each word goes to the speaker whose mean embedding the windows over it resemble most;
//      speakers are numbered in the order their first word is heard.
import type { NativeSpeakerEncoder } from '../binding.js';
import { CancelledError } from '../errors.js';
import { loudnessGain, speakerEncoder } from './speaker-model.js';

export interface DiarizeOptions {
  /** Checked between encoder batches; once aborted the promise rejects with CancelledError. */
  readonly signal?: AbortSignal;
  /** The encoder to use. Default: the process's shared one (speakerEncoder()). */
  readonly encoder?: NativeSpeakerEncoder;
  /** Cosine similarity two clusters need to be merged. Default DIARIZE_DEFAULTS.threshold. */
  readonly threshold?: number;
}

export const DIARIZE_DEFAULTS = Object.freeze({
  /** Chosen from bench/diarize.ts (see docs/models.md, "Speakers"). */
  threshold: 0.84,
  /** Speech a cluster needs to count as a voice, s; less joins the nearest voice. */
  minSpeakerSeconds: 4,
  /** Voices whose mean embeddings are at least this alike are one voice. */
  centroidThreshold: 0.92,
  /** A silence this long between two words splits a run, s. */
  pauseSeconds: 0.3,
  /** Longest segment, s. */
  segmentSeconds: 6,
  /** Window length, s: the encoder's training length. */
  windowSeconds: 1.6,
  /** Step between windows of one segment, s (raised for long files so at most maxWindows are embedded). */
  hopSeconds: 0.4,
  /** Shortest window, s: shorter segments are widened around their middle. */
  minWindowSeconds: 0.4,
  /** Cap on embedded windows per file (bounds the encoder's work on long files). */
  maxWindows: 4000,
  /** Windows per native call; cancellation is checked between calls. */
  batch: 64,
});

const FRAMES_PER_SECOND = 100; // the encoder's mel hop is 10 ms

interface Span {
  start: number; // seconds
  end: number;
}

/**
 * A speaker index for every word of `words` (same order): 0 is the first voice heard, 1 the
 * next new voice, and so on. `pcm` is the whole file, 16 kHz mono; word times are in seconds
 * from its start. An empty word list gives [].
 */
export async function diarize(pcm: Float32Array, words: readonly Span[], options: DiarizeOptions = {}): Promise<number[]> {
  if (words.length === 0) return [];
  const duration = pcm.length / 16000;
  const clamped = words.map((w) => {
    const start = Math.min(Math.max(w.start, 0), duration);
    return { start, end: Math.min(Math.max(w.end, start), duration) };
  });
  const segments = segmentsOf(speechRuns(clamped, DIARIZE_DEFAULTS.pauseSeconds), clamped);
  const windows = windowsOf(segments);
  const encoder = options.encoder ?? (await speakerEncoder());
  const dim = encoder.dims.embedding;
  const windowEmbeddings = await embedWindows(encoder, pcm, windows, options.signal);
  const embeddings = segmentEmbeddings(windowEmbeddings, windows, segments.length, dim);
  const weights = segments.map((s) => Math.max(s.end - s.start, DIARIZE_DEFAULTS.minWindowSeconds));
  const threshold = options.threshold ?? DIARIZE_DEFAULTS.threshold;
  const labels = speakersOf(embeddings, dim, weights, cluster(embeddings, dim, weights, threshold));
  const voices = centroids(embeddings, dim, weights, labels);
  return firstHeardOrder(assignWords(clamped, segments, windows, windowEmbeddings, voices, labels), clamped);
}

/** Words (indices, time order) over a stretch of speech. */
interface Stretch extends Span {
  words: number[];
}

/** Words grouped into runs of speech with no pause of `pause` seconds or more inside. */
function speechRuns(words: readonly Span[], pause: number): Stretch[] {
  const order = words.map((_, i) => i).sort((a, b) => words[a].start - words[b].start || a - b);
  const runs: Stretch[] = [];
  for (const i of order) {
    const w = words[i];
    const last = runs[runs.length - 1];
    if (last && w.start - last.end < pause) {
      last.end = Math.max(last.end, w.end);
      last.words.push(i);
    } else {
      runs.push({ start: w.start, end: w.end, words: [i] });
    }
  }
  return runs;
}

/** Runs cut evenly into segments of at most segmentSeconds; a word goes to the one holding its middle. */
function segmentsOf(runs: readonly Stretch[], words: readonly Span[]): Stretch[] {
  const segments: Stretch[] = [];
  for (const run of runs) {
    const count = Math.max(1, Math.ceil((run.end - run.start) / DIARIZE_DEFAULTS.segmentSeconds));
    const length = (run.end - run.start) / count;
    const pieces = Array.from({ length: count }, (_, i) => ({ start: run.start + i * length, end: run.start + (i + 1) * length, words: [] as number[] }));
    for (const i of run.words) {
      const middle = (words[i].start + words[i].end) / 2;
      pieces[length > 0 ? Math.min(count - 1, Math.floor((middle - run.start) / length)) : 0].words.push(i);
    }
    segments.push(...pieces.filter((p) => p.words.length > 0));
  }
  return segments;
}

interface Window extends Span {
  segment: number;
}

/** Windows over every segment, evenly spaced so the first starts and the last ends with it. */
function windowsOf(segments: readonly Span[]): Window[] {
  const { windowSeconds, minWindowSeconds, maxWindows } = DIARIZE_DEFAULTS;
  const speech = segments.reduce((s, r) => s + Math.max(r.end - r.start, minWindowSeconds), 0);
  const hop = Math.max(DIARIZE_DEFAULTS.hopSeconds, speech / maxWindows);
  const windows: Window[] = [];
  segments.forEach((r, segment) => {
    const length = r.end - r.start;
    if (length <= windowSeconds) {
      const half = Math.max(length, minWindowSeconds) / 2;
      const middle = (r.start + r.end) / 2;
      windows.push({ start: Math.max(0, middle - half), end: middle + half, segment });
      return;
    }
    const count = Math.ceil((length - windowSeconds) / hop) + 1;
    const step = (length - windowSeconds) / (count - 1);
    for (let i = 0; i < count; i++) windows.push({ start: r.start + i * step, end: r.start + i * step + windowSeconds, segment });
  });
  return windows;
}

async function embedWindows(encoder: NativeSpeakerEncoder, pcm: Float32Array, windows: readonly Window[], signal?: AbortSignal): Promise<Float32Array> {
  const dim = encoder.dims.embedding;
  const gain = loudnessGain(pcm);
  const out = new Float32Array(windows.length * dim);
  for (let at = 0; at < windows.length; at += DIARIZE_DEFAULTS.batch) {
    if (signal?.aborted) throw new CancelledError();
    const part = windows.slice(at, at + DIARIZE_DEFAULTS.batch);
    const starts = Int32Array.from(part, (w) => Math.round(w.start * FRAMES_PER_SECOND));
    const lengths = Int32Array.from(part, (w) => Math.max(1, Math.round((w.end - w.start) * FRAMES_PER_SECOND)));
    out.set(await encoder.embed(pcm, starts, lengths, gain), at * dim);
  }
  if (signal?.aborted) throw new CancelledError();
  return out;
}

/** Per segment: the L2-normalised mean of its windows' embeddings. */
function segmentEmbeddings(windowEmbeddings: Float32Array, windows: readonly Window[], segments: number, dim: number): Float32Array {
  const out = new Float32Array(segments * dim);
  windows.forEach((w, i) => {
    for (let k = 0; k < dim; k++) out[w.segment * dim + k] += windowEmbeddings[i * dim + k];
  });
  for (let s = 0; s < segments; s++) normalise(out.subarray(s * dim, (s + 1) * dim));
  return out;
}

/**
 * Average-linkage agglomerative clustering on cosine similarity (rows are L2-normalised), each
 * row weighted (by its duration). Returns a cluster id per row. Each cluster remembers its most
 * similar neighbour, so a merge costs O(n) plus a rescan of the clusters that pointed at the pair.
 */
function cluster(embeddings: Float32Array, dim: number, weights: readonly number[], threshold: number): number[] {
  const n = embeddings.length / dim;
  const sim = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let dot = 0;
      for (let k = 0; k < dim; k++) dot += embeddings[i * dim + k] * embeddings[j * dim + k];
      sim[i * n + j] = sim[j * n + i] = dot;
    }
  }
  const weight = [...weights];
  const owner = Array.from({ length: n }, (_, i) => i); // row -> cluster (a representative row)
  const active = new Set(owner);
  const best = new Int32Array(n).fill(-1);
  const rescan = (i: number): void => {
    best[i] = -1;
    for (const k of active) if (k !== i && (best[i] < 0 || sim[i * n + k] > sim[i * n + best[i]])) best[i] = k;
  };
  for (const i of active) rescan(i);

  while (active.size > 1) {
    let a = -1;
    for (const i of active) if (best[i] >= 0 && (a < 0 || sim[i * n + best[i]] > sim[a * n + best[a]])) a = i;
    const b = best[a];
    if (sim[a * n + b] < threshold) break;
    // Merge b into a: the similarity to the union is the weighted mean (average linkage).
    active.delete(b);
    for (const k of active) {
      if (k === a) continue;
      const s = (weight[a] * sim[a * n + k] + weight[b] * sim[b * n + k]) / (weight[a] + weight[b]);
      sim[a * n + k] = sim[k * n + a] = s;
    }
    weight[a] += weight[b];
    for (let r = 0; r < n; r++) if (owner[r] === b) owner[r] = a;
    for (const k of active) {
      if (k === a || best[k] === a || best[k] === b) rescan(k);
      else if (sim[k * n + a] > sim[k * n + best[k]]) best[k] = a;
    }
  }
  return owner;
}

/**
 * Turns a fine clustering into speakers: clusters holding less than minSpeakerSeconds of speech
 * join the nearest larger one (a lone odd segment is not a voice), clusters whose mean
 * embeddings are at least centroidThreshold alike are joined, and finally every segment moves to
 * the speaker whose mean embedding it is closest to, until nothing moves. Returns a speaker id per row.
 */
function speakersOf(embeddings: Float32Array, dim: number, weights: readonly number[], fine: readonly number[]): number[] {
  const { minSpeakerSeconds, centroidThreshold } = DIARIZE_DEFAULTS;
  let labels = [...fine];
  const groups = (): Map<number, { weight: number; centroid: Float32Array }> => {
    const out = new Map<number, { weight: number; centroid: Float32Array }>();
    labels.forEach((l, i) => {
      const g = out.get(l) ?? { weight: 0, centroid: new Float32Array(dim) };
      g.weight += weights[i];
      for (let k = 0; k < dim; k++) g.centroid[k] += weights[i] * embeddings[i * dim + k];
      out.set(l, g);
    });
    for (const g of out.values()) normalise(g.centroid);
    return out;
  };
  const nearest = (v: Float32Array, among: Map<number, { centroid: Float32Array }>): number => {
    let best = -1;
    let bestSim = -Infinity;
    for (const [l, g] of among) {
      const sim = dot(v, g.centroid);
      if (sim > bestSim) [best, bestSim] = [l, sim];
    }
    return best;
  };

  // Small clusters join the nearest large one (all one speaker when none is large).
  let all = groups();
  const large = new Map([...all].filter(([, g]) => g.weight >= minSpeakerSeconds));
  if (large.size === 0) return labels.map(() => 0);
  labels = labels.map((l) => (large.has(l) ? l : nearest((all.get(l) as { centroid: Float32Array }).centroid, large)));

  // Speakers that sound alike once their segments are pooled are one speaker.
  for (;;) {
    all = groups();
    let pair: [number, number] | undefined;
    let pairSim: number = centroidThreshold;
    const ids = [...all.keys()];
    for (let a = 0; a < ids.length; a++) {
      for (let b = a + 1; b < ids.length; b++) {
        const sim = dot((all.get(ids[a]) as { centroid: Float32Array }).centroid, (all.get(ids[b]) as { centroid: Float32Array }).centroid);
        if (sim >= pairSim) [pair, pairSim] = [[ids[a], ids[b]], sim];
      }
    }
    if (!pair) break;
    const [keep, drop] = pair;
    labels = labels.map((l) => (l === drop ? keep : l));
  }

  // Each segment to its nearest speaker, until stable (bounded: it converges in a few rounds).
  for (let round = 0; round < 10; round++) {
    all = groups();
    const next = labels.map((_, i) => nearest(embeddings.subarray(i * dim, (i + 1) * dim), all));
    if (next.every((l, i) => l === labels[i])) break;
    labels = next;
  }
  return labels;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k] * b[k];
  return s;
}

function normalise(v: Float32Array): void {
  const norm = Math.hypot(...v) || 1;
  for (let k = 0; k < v.length; k++) v[k] /= norm;
}

/** Each speaker's mean embedding (L2-normalised), from its segments weighted by duration. */
function centroids(embeddings: Float32Array, dim: number, weights: readonly number[], labels: readonly number[]): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  labels.forEach((l, i) => {
    const c = out.get(l) ?? new Float32Array(dim);
    for (let k = 0; k < dim; k++) c[k] += weights[i] * embeddings[i * dim + k];
    out.set(l, c);
  });
  for (const c of out.values()) normalise(c);
  return out;
}

/**
 * Each word's speaker: the one whose mean embedding the windows over the word resemble most,
 * each window counting by its overlap with the word. Windows are shorter than segments, so a
 * turn change inside a segment (no pause between the turns) moves the label near the change.
 */
function assignWords(
  words: readonly Span[],
  segments: readonly Stretch[],
  windows: readonly Window[],
  windowEmbeddings: Float32Array,
  voices: Map<number, Float32Array>,
  segmentLabels: readonly number[],
): number[] {
  const dim = windowEmbeddings.length / Math.max(windows.length, 1);
  const bySegment = segments.map(() => [] as number[]);
  windows.forEach((w, i) => bySegment[w.segment].push(i));
  const result = new Array<number>(words.length);
  segments.forEach((segment, s) => {
    for (const wi of segment.words) {
      const word = words[wi];
      const score = new Map<number, number>();
      for (const i of bySegment[s]) {
        const overlap = Math.min(word.end, windows[i].end) - Math.max(word.start, windows[i].start);
        if (overlap <= 0) continue;
        const row = windowEmbeddings.subarray(i * dim, (i + 1) * dim);
        for (const [voice, centroid] of voices) score.set(voice, (score.get(voice) ?? 0) + overlap * dot(row, centroid));
      }
      let best = segmentLabels[s];
      for (const [voice, v] of score) if (v > (score.get(best) ?? -Infinity)) best = voice;
      result[wi] = best;
    }
  });
  return result;
}

/** Renumbers cluster ids 0, 1, 2... in the order of the first word (by start time) of each. */
function firstHeardOrder(labels: readonly number[], words: readonly Span[]): number[] {
  const order = words.map((_, i) => i).sort((a, b) => words[a].start - words[b].start || a - b);
  const index = new Map<number, number>();
  for (const i of order) if (!index.has(labels[i])) index.set(labels[i], index.size);
  return labels.map((l) => index.get(l) as number);
}
