// Speaker diarization: which voice says each word of a transcript. The number of speakers is
// found, not given.
//
//   1. Speech runs: the transcript's words, split where a pause of `pauseSeconds` or more falls
//      between two words (a pause is where turns usually change; short turns in a dialog are
//      often apart by 0.1-0.3 s). The word spans are the voice activity: no separate VAD runs.
//   2. Segments: runs cut evenly into pieces of at most `segmentSeconds`, so a turn change
//      without a pause spoils one short piece, not a whole run.
//   3. Each segment's embedding is the normalised mean of the speaker encoder's embeddings of
//      1.6 s windows sliding over it (CAM++, native/core/campplus.cpp).
//   4. Agglomerative clustering of the segments by cosine similarity, average linkage weighted
//      by duration, with a merge threshold that follows how alike one voice's segments are in
//      this recording (cluster); then clusters with too little speech join the nearest voice,
//      segments move to the nearest voice, and voices that sound alike once pooled merge.
//   5. Each word goes to the speaker whose mean embedding the windows over it resemble most;
//      speakers are numbered in the order their first word is heard.
import type { SpeakerEmbedder } from '../engine/engine.js';
import { dot } from '../engine/vectors.js';
import { CancelledError } from '../errors.js';

export interface DiarizeOptions {
  /** Checked between encoder batches; once aborted the promise rejects with CancelledError. */
  readonly signal?: AbortSignal;
  /** The speaker encoder: a request's Session.speakers, so its work is admitted with the request. */
  readonly encoder: SpeakerEmbedder;
  /** Changes to the constants (bench/eval/diarize.ts measures them). */
  readonly tuning?: Partial<
    Tuning & {
      pauseSeconds: number;
      segmentSeconds: number;
      hopSeconds: number;
      minWindowSeconds: number;
      minWeightSeconds: number;
    }
  >;
}

export interface Tuning {
  /** Highest similarity two clusters need to merge (see cluster). */
  readonly threshold: number;
  /** The need is lowered to the file's typical same-voice similarity less this margin. */
  readonly margin: number;
  /** Voices whose mean embeddings are at least this alike are one voice. */
  readonly sameVoice: number;
  /** Speech a cluster needs to count as a voice, s; less joins the nearest voice. */
  readonly minSpeakerSeconds: number;
}

/**
 * The constants, chosen for the CAM++ encoder with bench/eval/diarize.ts (docs/audio.md, "Speakers";
 * bench/results/diarize.json). CAM++ finds one voice's pieces only 0.6-0.7 alike with 1.6 s of
 * context, other voices' mostly less: hence a threshold of 0.6 and a wide margin.
 */
export const DIARIZE_DEFAULTS = Object.freeze({
  threshold: 0.6,
  margin: 0.15,
  sameVoice: 0.85,
  /** Short-turn dialogs give a voice 2 turns of 2-5 s. */
  minSpeakerSeconds: 1.5,
  /** Step between the windows over a long segment, s. */
  hopSeconds: 0.4,
  /** A segment shorter than this is embedded from a window this long around its middle, s (0.4 s is too noisy). */
  minWindowSeconds: 1.6,
  /**
   * A segment counts in the clustering by its length, but at least this much, s: well under
   * minSpeakerSeconds, so that one stray short piece is not a voice (a floor of 0.8 s or more
   * splits voices; measured with CAM++: docs/performance.md, "Diarization with GE2E, retired").
   */
  minWeightSeconds: 0.4,
  /** A silence this long between two words splits a run, s. */
  pauseSeconds: 0.15,
  /** Longest segment, s. */
  segmentSeconds: 6,
  /** Window length, s. */
  windowSeconds: 1.6,
  /** Cap on embedded windows per file (bounds the encoder's work on long files). */
  maxWindows: 4000,
  /** Windows per native call; cancellation is checked between calls. */
  batch: 64,
});

const FRAMES_PER_SECOND = 100; // the encoder's fbank hop is 10 ms

interface Span {
  start: number; // seconds
  end: number;
}

/**
 * A speaker index for every word of `words` (same order): 0 is the first voice heard, 1 the
 * next new voice, and so on. `pcm` is the whole file, 16 kHz mono; word times are in seconds
 * from its start. An empty word list gives [].
 */
export async function diarize(pcm: Float32Array, words: readonly Span[], options: DiarizeOptions): Promise<number[]> {
  if (words.length === 0) return [];
  const duration = pcm.length / 16000;
  const clamped = words.map((w) => {
    const start = Math.min(Math.max(w.start, 0), duration);
    return { start, end: Math.min(Math.max(w.end, start), duration) };
  });
  const tuning = { ...DIARIZE_DEFAULTS, ...options.tuning };
  const segments = segmentsOf(speechRuns(clamped, tuning.pauseSeconds), clamped, tuning.segmentSeconds);
  const windows = windowsOf(segments, tuning.hopSeconds, tuning.minWindowSeconds);
  const dim = options.encoder.dims.embedding;
  const windowEmbeddings = await embedWindows(options.encoder, pcm, windows, options.signal);
  const embeddings = segmentEmbeddings(windowEmbeddings, windows, segments.length, dim);
  const weights = segments.map((s) => Math.max(s.end - s.start, tuning.minWeightSeconds));
  const labels = speakersOf(embeddings, dim, weights, heardBy(windows, segments.length), tuning);
  const voices = new Map([...groupsOf(embeddings, dim, weights, labels)].map(([l, g]) => [l, g.centroid]));
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
function segmentsOf(runs: readonly Stretch[], words: readonly Span[], longest: number): Stretch[] {
  const segments: Stretch[] = [];
  for (const run of runs) {
    const count = Math.max(1, Math.ceil((run.end - run.start) / longest));
    const length = (run.end - run.start) / count;
    const pieces = Array.from({ length: count }, (_, i) => ({
      start: run.start + i * length,
      end: run.start + (i + 1) * length,
      words: [] as number[],
    }));
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
function windowsOf(segments: readonly Span[], hopSeconds: number, minWindowSeconds: number): Window[] {
  const { windowSeconds, maxWindows } = DIARIZE_DEFAULTS;
  const speech = segments.reduce((s, r) => s + Math.max(r.end - r.start, minWindowSeconds), 0);
  const hop = Math.max(hopSeconds, speech / maxWindows);
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
    for (let i = 0; i < count; i++)
      windows.push({ start: r.start + i * step, end: r.start + i * step + windowSeconds, segment });
  });
  return windows;
}

/**
 * The gain that raises the whole file to -30 dBFS RMS (never lowers it), once per file since
 * partials see only a part. CAM++ mean-normalises its fbank per partial, so the level only
 * matters where a band meets the log floor; levelling keeps a quiet file's speakers those of its
 * loud copy (test/audio/diarize.test.ts).
 */
function loudnessGain(pcm: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
  if (sum === 0) return 1;
  const change = -30 - 10 * Math.log10(sum / pcm.length);
  return change > 0 ? 10 ** (change / 20) : 1;
}

async function embedWindows(
  encoder: SpeakerEmbedder,
  pcm: Float32Array,
  windows: readonly Window[],
  signal?: AbortSignal,
): Promise<Float32Array> {
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
function segmentEmbeddings(
  windowEmbeddings: Float32Array,
  windows: readonly Window[],
  segments: number,
  dim: number,
): Float32Array {
  const out = new Float32Array(segments * dim);
  windows.forEach((w, i) => {
    for (let k = 0; k < dim; k++) out[w.segment * dim + k] += windowEmbeddings[i * dim + k];
  });
  for (let s = 0; s < segments; s++) normalise(out.subarray(s * dim, (s + 1) * dim));
  return out;
}

/** Per segment, the stretch of audio its windows cover. */
function heardBy(windows: readonly Window[], segments: number): Span[] {
  const out = Array.from({ length: segments }, () => ({ start: Infinity, end: -Infinity }));
  for (const w of windows) {
    out[w.segment].start = Math.min(out[w.segment].start, w.start);
    out[w.segment].end = Math.max(out[w.segment].end, w.end);
  }
  return out;
}

/** Cosine similarity of every pair of rows (rows are L2-normalised), n x n. */
function similarities(embeddings: Float32Array, dim: number): Float32Array {
  const n = embeddings.length / dim;
  const sim = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    sim[i * n + i] = 1;
    for (let j = i + 1; j < n; j++) {
      let dot = 0;
      for (let k = 0; k < dim; k++) dot += embeddings[i * dim + k] * embeddings[j * dim + k];
      sim[i * n + j] = sim[j * n + i] = dot;
    }
  }
  return sim;
}

/**
 * Average-linkage agglomerative clustering on cosine similarity, each row weighted (by its
 * duration), merging while the two closest clusters are at least min(threshold, typical - margin)
 * alike. `typical` is the weighted median, over segments, of a segment's similarity to its most
 * alike segment whose windows do not overlap its own (`heard`: the audio each segment's windows
 * cover; overlapping windows share audio and look alike whoever speaks): how alike one voice's
 * turns are in this recording. Recordings differ in that (a clean synthetic voice ~0.9; a
 * reverberant or telephone voice 0.7-0.8), so a fixed threshold either splits the one or joins the
 * other. Returns a cluster id (a representative row) per row. Each cluster remembers its most
 * similar neighbour, so a merge costs O(n) plus a rescan of the clusters that pointed at the pair.
 */
function cluster(
  similarity: Float32Array,
  weights: readonly number[],
  heard: readonly Span[],
  tuning: Tuning,
): number[] {
  const n = weights.length;
  const sim = similarity.slice();
  const apart = (i: number, j: number) => heard[j].start >= heard[i].end || heard[i].start >= heard[j].end;
  const alike = weights.map((_, i) => {
    let most = -1;
    for (let j = 0; j < n; j++) if (j !== i && apart(i, j)) most = Math.max(most, sim[i * n + j]);
    for (let j = 0; most < 0 && j < n; j++) if (j !== i) most = Math.max(most, sim[i * n + j]);
    return most;
  });
  const threshold = Math.min(tuning.threshold, weightedMedian(alike, weights) - tuning.margin);
  const weight = [...weights];
  const owner = Array.from({ length: n }, (_, i) => i);
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

function weightedMedian(values: readonly number[], weights: readonly number[]): number {
  const order = values.map((_, i) => i).sort((a, b) => values[a] - values[b]);
  const half = weights.reduce((s, w) => s + w, 0) / 2;
  let sum = 0;
  for (const i of order) if ((sum += weights[i]) >= half) return values[i];
  return values[order[order.length - 1]];
}

/**
 * Speakers of the segments: clustered (cluster), small clusters folded in and segments moved to
 * their nearest voice (refine), then voices at least sameVoice alike joined. A speaker id per row.
 */
function speakersOf(
  embeddings: Float32Array,
  dim: number,
  weights: readonly number[],
  heard: readonly Span[],
  tuning: Tuning,
): number[] {
  if (weights.length < 2) return weights.map(() => 0);
  const fine = cluster(similarities(embeddings, dim), weights, heard, tuning);
  return joinAlike(embeddings, dim, weights, refine(embeddings, dim, weights, fine, tuning), tuning.sameVoice);
}

type Groups = Map<number, { weight: number; centroid: Float32Array }>;

/** Each label's total weight and mean embedding (L2-normalised). */
function groupsOf(
  embeddings: Float32Array,
  dim: number,
  weights: readonly number[],
  labels: readonly number[],
): Groups {
  const out: Groups = new Map();
  labels.forEach((l, i) => {
    const g = out.get(l) ?? { weight: 0, centroid: new Float32Array(dim) };
    g.weight += weights[i];
    for (let k = 0; k < dim; k++) g.centroid[k] += weights[i] * embeddings[i * dim + k];
    out.set(l, g);
  });
  for (const g of out.values()) normalise(g.centroid);
  return out;
}

function nearest(v: Float32Array, among: Groups): number {
  let best = -1;
  let bestSim = -Infinity;
  for (const [l, g] of among) {
    const sim = dot(v, g.centroid);
    if (sim > bestSim) [best, bestSim] = [l, sim];
  }
  return best;
}

/**
 * Clusters with less than minSpeakerSeconds of speech join the nearest larger one (a lone odd
 * segment is not a voice), then every segment moves to the cluster whose mean embedding it is
 * closest to, until nothing moves (bounded: it converges in a few rounds).
 */
function refine(
  embeddings: Float32Array,
  dim: number,
  weights: readonly number[],
  fine: readonly number[],
  tuning: Tuning,
): number[] {
  const all = groupsOf(embeddings, dim, weights, fine);
  const large: Groups = new Map([...all].filter(([, g]) => g.weight >= tuning.minSpeakerSeconds));
  if (large.size === 0) return fine.map(() => fine[0]);
  let labels = fine.map((l) =>
    large.has(l) ? l : nearest((all.get(l) as { centroid: Float32Array }).centroid, large),
  );
  for (let round = 0; round < 10; round++) {
    const groups = groupsOf(embeddings, dim, weights, labels);
    const next = labels.map((_, i) => nearest(embeddings.subarray(i * dim, (i + 1) * dim), groups));
    if (next.every((l, i) => l === labels[i])) break;
    labels = next;
  }
  return labels;
}

/** Joins, pair by pair, voices whose mean embeddings are at least `threshold` alike. */
function joinAlike(
  embeddings: Float32Array,
  dim: number,
  weights: readonly number[],
  start: readonly number[],
  threshold: number,
): number[] {
  let labels = [...start];
  for (;;) {
    const all = groupsOf(embeddings, dim, weights, labels);
    let pair: [number, number] | undefined;
    let pairSim = threshold;
    const ids = [...all.keys()];
    for (let a = 0; a < ids.length; a++) {
      for (let b = a + 1; b < ids.length; b++) {
        const sim = dot(
          (all.get(ids[a]) as { centroid: Float32Array }).centroid,
          (all.get(ids[b]) as { centroid: Float32Array }).centroid,
        );
        if (sim >= pairSim) [pair, pairSim] = [[ids[a], ids[b]], sim];
      }
    }
    if (!pair) return labels;
    const [keep, drop] = pair;
    labels = labels.map((l) => (l === drop ? keep : l));
  }
}

function normalise(v: Float32Array): void {
  const norm = Math.hypot(...v) || 1;
  for (let k = 0; k < v.length; k++) v[k] /= norm;
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
        for (const [voice, centroid] of voices)
          score.set(voice, (score.get(voice) ?? 0) + overlap * dot(row, centroid));
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
