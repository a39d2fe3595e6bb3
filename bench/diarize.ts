// Diarization on espeak-ng conversations made here (2, 3 and 4 speakers, different voice
// families and variants, short turn gaps, a 5-minute file, one single-speaker control): speakers
// found and the share of words given the right speaker after best label matching, over a sweep
// of the clustering threshold, plus speed at the default threshold. Prints a table, writes bench/results/diarize.json.
//
//   node dist/bench/diarize.js
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NativeSpeakerEncoder } from '../src/binding.js';
import { DIARIZE_DEFAULTS, diarize } from '../src/audio/diarize.js';
import { speakerEncoder } from '../src/audio/speaker-model.js';
import { ensureSpeechTools, matchedAccuracy, scripted, type Conversation } from '../test/helpers/speech-conversation.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The conversations: voices and the order of their turns. */
export const CASES: { name: string; voices: string[]; pattern: number[]; seed: number; minGap?: number; maxGap?: number }[] = [
  { name: '2: en-us+m3 / en+f2', voices: ['en-us+m3', 'en+f2'], pattern: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1], seed: 1 },
  { name: '3: en-us+m3 / en+f2 / en+m7', voices: ['en-us+m3', 'en+f2', 'en+m7'], pattern: [0, 1, 2, 1, 0, 2, 0, 1, 2, 0, 1, 2], seed: 2 },
  { name: '2 male: en-us+m3 / en+m7', voices: ['en-us+m3', 'en+m7'], pattern: [0, 1, 0, 1, 1, 0, 1, 0, 0, 1], seed: 3 },
  { name: '2 female: en+f2 / en-us+f4', voices: ['en+f2', 'en-us+f4'], pattern: [0, 1, 0, 1, 0, 0, 1, 0, 1, 1], seed: 4 },
  { name: '3 accents: en-gb-scotland / en-029+f3 / en-us+m1', voices: ['en-gb-scotland', 'en-029+f3', 'en-us+m1'], pattern: [0, 1, 2, 0, 2, 1, 0, 1, 2, 2, 0, 1], seed: 5 },
  { name: '4: en-us+m3 / en+f2 / en+m7 / en-us+f4', voices: ['en-us+m3', 'en+f2', 'en+m7', 'en-us+f4'], pattern: [0, 1, 2, 3, 1, 0, 3, 2, 0, 1, 2, 3, 0], seed: 6 },
  { name: '2, gaps 0.05-0.2 s: en-us+m1 / en-029+f3', voices: ['en-us+m1', 'en-029+f3'], pattern: [0, 1, 0, 1, 1, 0, 1, 0, 1, 0], seed: 8, minGap: 0.05, maxGap: 0.2 },
  { name: '2, 5 minutes: en-us+m1 / en+f2', voices: ['en-us+m1', 'en+f2'], pattern: Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? 0 : i % 2)), seed: 9 },
  { name: '1: en-us+m3 alone', voices: ['en-us+m3'], pattern: [0, 0, 0, 0, 0, 0, 0, 0], seed: 7 },
];

const THRESHOLDS = [0.7, 0.74, 0.76, 0.78, 0.8, 0.82, 0.84, 0.85, 0.86, 0.88, 0.9, 0.92];

/** Remembers embeddings per (pcm, windows), so a threshold sweep embeds each file once. */
function caching(encoder: NativeSpeakerEncoder): NativeSpeakerEncoder {
  const memo = new WeakMap<Float32Array, Map<string, Promise<Float32Array>>>();
  return {
    dims: encoder.dims,
    embed(pcm, starts, lengths, gain) {
      const byPcm = memo.get(pcm) ?? new Map<string, Promise<Float32Array>>();
      memo.set(pcm, byPcm);
      const key = `${starts.join(',')}|${lengths.join(',')}|${gain}`;
      if (!byPcm.has(key)) byPcm.set(key, encoder.embed(pcm, starts, lengths, gain));
      return byPcm.get(key) as Promise<Float32Array>;
    },
  };
}

function speakersIn(labels: number[]): number {
  return new Set(labels).size;
}

ensureSpeechTools();
const encoder = await speakerEncoder();
const cached = caching(encoder);
const made: { name: string; conversation: Conversation }[] = CASES.map((c) => ({ name: c.name, conversation: scripted(c.voices, c.pattern, c) }));

const sweep = [];
for (const threshold of THRESHOLDS) {
  const rows = [];
  for (const { name, conversation } of made) {
    const labels = await diarize(conversation.pcm, conversation.words, { encoder: cached, threshold });
    const truth = conversation.words.map((w) => w.speaker);
    rows.push({ name, speakers: conversation.voices.length, found: speakersIn(labels), accuracy: matchedAccuracy(truth, labels) });
  }
  sweep.push({
    threshold,
    countRight: rows.filter((r) => r.found === r.speakers).length,
    minAccuracy: Math.min(...rows.map((r) => r.accuracy)),
    rows,
  });
}

// Speed at the default threshold, uncached (embedding dominates), one file after another.
const speed = [];
for (const { name, conversation } of made) {
  const started = performance.now();
  const labels = await diarize(conversation.pcm, conversation.words, { encoder });
  const ms = performance.now() - started;
  const seconds = conversation.pcm.length / 16000;
  const truth = conversation.words.map((w) => w.speaker);
  speed.push({
    name,
    audioSeconds: Number(seconds.toFixed(1)),
    words: conversation.words.length,
    speakers: conversation.voices.length,
    found: speakersIn(labels),
    accuracy: Number(matchedAccuracy(truth, labels).toFixed(4)),
    ms: Math.round(ms),
    realTimeFactor: Number((ms / 1000 / seconds).toFixed(4)),
  });
}

console.log('threshold sweep (speakers found / word accuracy per conversation):');
console.log(['threshold', 'count right', 'min acc', ...CASES.map((c) => c.name.split(':')[0])].join('\t'));
for (const s of sweep) {
  console.log([s.threshold, `${s.countRight}/${CASES.length}`, s.minAccuracy.toFixed(3), ...s.rows.map((r) => `${r.found}/${(100 * r.accuracy).toFixed(1)}%`)].join('\t'));
}
console.log(`\nat the default threshold ${DIARIZE_DEFAULTS.threshold}:`);
console.table(speed);

const report = {
  command: 'node dist/bench/diarize.js',
  date: new Date().toISOString(),
  machine: '2 cores (shared with other work while measured), no GPU',
  defaultThreshold: DIARIZE_DEFAULTS.threshold,
  cases: CASES,
  sweep,
  atDefault: speed,
};
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/diarize.json`, `${JSON.stringify(report, null, 2)}\n`);
