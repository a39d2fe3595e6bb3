// Diarization, measured three ways. Prints tables, writes its run (by command line) into
// bench/results/diarize.json.
//
//   - short turns, synthetic: dialogs of 2-4 espeak-ng voices (different sex, accent and pitch)
//     with turns of 2-5 s, generated from a seed;
//   - short turns, recorded: dialogs stitched from pieces (2-5 s) of real speakers (a LibriVox
//     reader, J. F. Kennedy, the two callers of pyannote's sample call), generated from a seed;
//     plus that call itself, whole;
//   - long files: the espeak-ng conversations with long turns of the first measurements (2-4
//     voices, a 5-minute file, one single-voice control), with their exact word times.
//
// The short-turn sets go through whisper as a request does (src/audio/transcription.ts) and a
// word's true speaker is the one speaking at its middle. Per set: files whose speaker count is
// right, and words on the right speaker after the best one-to-one matching of labels (all words
// of the set pooled, and the worst file). Whisper's words are cached by audio hash in the
// system's temp folder, so a re-run only re-diarizes.
//
//   node dist/bench/eval/diarize.js [--seed N] [--synthetic N] [--recorded N] [--only short|long] [--words script]
//                                   [--speaker MODEL_ID] [--tuning JSON]
//
// --words script gives the synthetic dialogs their script's word times (spread over each turn by
// letter count) instead of whisper's: a quicker check while developing. --speaker measures another
// speaker encoder of the manifest (default: the one diarization uses); --tuning overrides
// clustering constants, e.g. '{"threshold":0.6}'.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DIARIZE_DEFAULTS, diarize } from '../../src/audio/diarize.js';
import { DEFAULT_SPEAKER_MODEL } from '../../src/models/manifest.js';
import { loadConfig } from '../../src/config.js';
import { loadAudio } from '../../src/service.js';
import { Transcription } from '../../src/audio/transcription.js';
import type { TranscriptionResponse, Word } from '../../src/api/transcription.js';
import { Engine, type SpeakerEmbedder } from '../../src/engine/engine.js';
import { wavOf } from '../../test/audio/speech.js';
import { testModelPath, testSpeakerEncoder } from '../../test/helpers/model.js';
import {
  ensureSpeechTools,
  joined,
  LINES,
  matchedAccuracy,
  recordedVoices,
  scripted,
  seeded,
  speakerAt,
  spoken,
  telephoneCall,
  voiceName,
  withWords,
  type Conversation,
  type Turn,
} from '../../test/helpers/speech-conversation.js';
import { recordRun } from '../harness.js';

// Loaded on first use, so the generators can be imported without the addon.
let encoder: Promise<SpeakerEmbedder> | undefined;
let speakerModel: string | undefined;
let tuning: Record<string, number> | undefined;

/** espeak-ng voices for the synthetic dialogs: sex, accent and pitch differ between them. */
export const VOICE_POOL: readonly Omit<Turn, 'text'>[] = [
  { voice: 'en-us+m3' }, // US, male
  { voice: 'en+f2' }, // British, female
  { voice: 'en-us+f4' }, // US, female
  { voice: 'en+m7' }, // British, male
  { voice: 'en-gb-scotland' }, // Scottish, male
  { voice: 'en-029+f3' }, // Caribbean, female
  { voice: 'en-us+m1', pitch: 25 }, // US, male, low
  { voice: 'en-gb-x-rp+f5', pitch: 75 }, // received pronunciation, female, high
  { voice: 'en-us-nyc+m2', pitch: 65 }, // New York, male, high
  { voice: 'en-gb-x-gbclan+f1', pitch: 35 }, // Lancaster, female, low
];

/** Words to speak, in order: the conversation lines run together. */
const WORDS = LINES.join(' ').split(/\s+/);

/** `count` distinct items of `from`, in random order. */
function pick<T>(from: readonly T[], count: number, random: () => number): T[] {
  const rest = [...from];
  return Array.from(
    { length: Math.min(count, rest.length) },
    () => rest.splice(Math.floor(random() * rest.length), 1)[0],
  );
}

/** Speaker order for `turns` turns of `voices` voices: every voice early, never the same twice in a row. */
function turnOrder(voices: number, turns: number, random: () => number): number[] {
  const order = pick([...Array(voices).keys()], voices, random);
  while (order.length < turns) {
    const next = Math.floor(random() * (voices - 1));
    order.push(next >= order[order.length - 1] ? next + 1 : next);
  }
  return order;
}

/**
 * Synthetic dialog `index` of the set made from `seed`: 2, 3 or 4 voices (in turn), 2 turns per
 * voice plus 0-2, each turn aiming at 2-5 s of speech (words are added or dropped until it does),
 * gaps of 0.1-0.5 s.
 */
export function syntheticDialog(seed: number, index: number): { name: string; conversation: Conversation } {
  const random = seeded(seed * 1000 + index);
  const count = 2 + (index % 3);
  const voices = pick(VOICE_POOL, count, random);
  const order = turnOrder(count, 2 * count + Math.floor(random() * 3), random);
  let cursor = Math.floor(random() * WORDS.length);
  const turns = order.map((v) => {
    const target = 2 + 3 * random();
    let words = Math.round(target * 2.6);
    let turn = { ...voices[v], text: '' };
    let pcm: Float32Array = new Float32Array(0);
    for (let attempt = 0; attempt < 4; attempt++) {
      turn = {
        ...voices[v],
        text: Array.from({ length: words }, (_, k) => WORDS[(cursor + k) % WORDS.length]).join(' '),
      };
      pcm = spoken(turn);
      const seconds = pcm.length / 16000;
      if (seconds >= 2 && seconds <= 5) break;
      words = Math.max(2, Math.round((words * target) / seconds));
    }
    cursor += words;
    return { turn, pcm };
  });
  const conversation = withWords(
    joined(
      turns.map(({ turn, pcm }) => ({ speaker: voiceName(turn), pcm })),
      { seed: seed * 1000 + index, minGap: 0.1, maxGap: 0.5 },
    ),
    turns.map(({ turn }) => turn.text),
  );
  return { name: `synthetic ${index}: ${conversation.voices.join(' / ')}`, conversation };
}

/**
 * Recorded dialog `index` of the set made from `seed`: 2, 3 or 4 real speakers (in turn), each
 * piece used at most once per dialog, 2 turns per speaker plus 0-2 while pieces last, gaps of
 * 0.1-0.5 s.
 */
export function recordedDialog(
  voices: ReturnType<typeof recordedVoices>,
  seed: number,
  index: number,
): { name: string; conversation: Conversation } {
  const random = seeded(seed * 1000 + 500 + index);
  const chosen = pick(voices, 2 + (index % 3), random).map((v) => ({
    speaker: v.speaker,
    left: pick(v.pieces, v.pieces.length, random),
  }));
  const order = turnOrder(chosen.length, 2 * chosen.length + Math.floor(random() * 3), random);
  const pieces = order.flatMap((v) => {
    const pcm = chosen[v].left.pop();
    return pcm ? [{ speaker: chosen[v].speaker, pcm }] : [];
  });
  const conversation = joined(pieces, { seed: seed * 1000 + 500 + index, minGap: 0.1, maxGap: 0.5 });
  return { name: `recorded ${index}: ${conversation.voices.join(' / ')}`, conversation };
}

/** The conversations with long turns of the first measurements: voices and turn order. */
export const LONG_CASES: {
  name: string;
  voices: string[];
  pattern: number[];
  seed: number;
  minGap?: number;
  maxGap?: number;
}[] = [
  { name: '2: en-us+m3 / en+f2', voices: ['en-us+m3', 'en+f2'], pattern: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1], seed: 1 },
  {
    name: '3: en-us+m3 / en+f2 / en+m7',
    voices: ['en-us+m3', 'en+f2', 'en+m7'],
    pattern: [0, 1, 2, 1, 0, 2, 0, 1, 2, 0, 1, 2],
    seed: 2,
  },
  { name: '2 male: en-us+m3 / en+m7', voices: ['en-us+m3', 'en+m7'], pattern: [0, 1, 0, 1, 1, 0, 1, 0, 0, 1], seed: 3 },
  {
    name: '2 female: en+f2 / en-us+f4',
    voices: ['en+f2', 'en-us+f4'],
    pattern: [0, 1, 0, 1, 0, 0, 1, 0, 1, 1],
    seed: 4,
  },
  {
    name: '3 accents: en-gb-scotland / en-029+f3 / en-us+m1',
    voices: ['en-gb-scotland', 'en-029+f3', 'en-us+m1'],
    pattern: [0, 1, 2, 0, 2, 1, 0, 1, 2, 2, 0, 1],
    seed: 5,
  },
  {
    name: '4: en-us+m3 / en+f2 / en+m7 / en-us+f4',
    voices: ['en-us+m3', 'en+f2', 'en+m7', 'en-us+f4'],
    pattern: [0, 1, 2, 3, 1, 0, 3, 2, 0, 1, 2, 3, 0],
    seed: 6,
  },
  {
    name: '2, gaps 0.05-0.2 s: en-us+m1 / en-029+f3',
    voices: ['en-us+m1', 'en-029+f3'],
    pattern: [0, 1, 0, 1, 1, 0, 1, 0, 1, 0],
    seed: 8,
    minGap: 0.05,
    maxGap: 0.2,
  },
  {
    name: '2, 5 minutes: en-us+m1 / en+f2',
    voices: ['en-us+m1', 'en+f2'],
    pattern: Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? 0 : i % 2)),
    seed: 9,
  },
  { name: '1: en-us+m3 alone', voices: ['en-us+m3'], pattern: [0, 0, 0, 0, 0, 0, 0, 0], seed: 7 },
];

/** Whisper's words for `pcm`, as a request gets them; cached by audio hash. */
async function whisperWords(transcription: Transcription, pcm: Float32Array): Promise<Word[]> {
  const wav = wavOf(pcm, 16000);
  const dir = join(tmpdir(), 'dm-diarize-bench');
  const file = join(
    dir,
    `${createHash('sha256').update(wav).update(loadConfig().whisperModel).digest('hex').slice(0, 24)}.json`,
  );
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Word[];
  const session = transcription.engine.admit();
  let body: TranscriptionResponse;
  try {
    ({ body } = await transcription.run(wav, false, session));
  } finally {
    session.close();
  }
  const words = body.segments.flatMap((s) => s.words.map(({ word, start, end }) => ({ word, start, end })));
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(words));
  return words;
}

interface Row {
  name: string;
  audioSeconds: number;
  words: number;
  speakers: number;
  found: number;
  accuracy: number;
  ms: number;
}

/** Diarizes one file; `truth` is each word's true speaker. */
async function measure(
  name: string,
  pcm: Float32Array,
  words: readonly { start: number; end: number }[],
  truth: number[],
  speakers: number,
): Promise<Row & { correct: number }> {
  const started = performance.now();
  const labels = await diarize(pcm, words, { encoder: await (encoder ??= testSpeakerEncoder(speakerModel)), tuning });
  const ms = performance.now() - started;
  const accuracy = words.length ? matchedAccuracy(truth, labels) : 1;
  return {
    name,
    audioSeconds: Number((pcm.length / 16000).toFixed(1)),
    words: words.length,
    speakers,
    found: new Set(labels).size,
    accuracy: Number(accuracy.toFixed(4)),
    correct: Math.round(accuracy * words.length),
    ms: Math.round(ms),
  };
}

function summary(set: string, rows: (Row & { correct: number })[]) {
  const words = rows.reduce((n, r) => n + r.words, 0);
  const out = {
    set,
    files: rows.length,
    countRight: rows.filter((r) => r.found === r.speakers).length,
    countRightShare: Number((rows.filter((r) => r.found === r.speakers).length / rows.length).toFixed(4)),
    wordAccuracy: Number((rows.reduce((n, r) => n + r.correct, 0) / Math.max(words, 1)).toFixed(4)),
    worstFileAccuracy: Math.min(...rows.map((r) => r.accuracy)),
    realTimeFactor: Number(
      (rows.reduce((n, r) => n + r.ms, 0) / 1000 / rows.reduce((n, r) => n + r.audioSeconds, 0)).toFixed(4),
    ),
  };
  console.log(
    `\n${set}: speaker count right in ${out.countRight}/${out.files}, words on the right speaker ${(100 * out.wordAccuracy).toFixed(1)}% (worst file ${(100 * out.worstFileAccuracy).toFixed(1)}%)`,
  );
  console.table(rows.map(({ correct: _, ...r }) => r));
  return { ...out, rows: rows.map(({ correct: _, ...r }) => r) };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      synthetic: { type: 'string', default: '30' },
      recorded: { type: 'string', default: '15' },
      only: { type: 'string' },
      words: { type: 'string', default: 'whisper' },
      speaker: { type: 'string' },
      tuning: { type: 'string' },
    },
  });
  speakerModel = args.speaker;
  tuning = args.tuning ? (JSON.parse(args.tuning) as Record<string, number>) : undefined;
  ensureSpeechTools();
  const seed = Number(args.seed);
  const sets = [];

  if (args.only !== 'long') {
    const config = loadConfig();
    const engine = await Engine.open({
      modelPath: await testModelPath(),
      slots: 1,
      threads: 2,
      queue: 1,
      contextSize: 512,
      batchSize: 64,
      promptCacheMiB: 0,
    });
    await loadAudio(engine, config);
    const transcription = new Transcription(engine, config);
    const viaWhisper = async (name: string, c: Conversation) => {
      const words = args.words === 'script' && c.words.length ? c.words : await whisperWords(transcription, c.pcm);
      return measure(
        name,
        c.pcm,
        words,
        words.map((w) => speakerAt(c, (w.start + w.end) / 2)),
        c.voices.length,
      );
    };

    const synthetic = [];
    for (let i = 0; i < Number(args.synthetic); i++) {
      const { name, conversation } = syntheticDialog(seed, i);
      synthetic.push(await viaWhisper(name, conversation));
    }
    if (synthetic.length) sets.push(summary('short turns, synthetic voices', synthetic));

    const voices = recordedVoices();
    const recorded = [];
    for (let i = 0; i < Number(args.recorded); i++) {
      const { name, conversation } = recordedDialog(voices, seed, i);
      recorded.push(await viaWhisper(name, conversation));
    }
    if (recorded.length) sets.push(summary('short turns, recorded speakers', recorded));

    // The call, whole: words inside overlapped speech are left out of the score.
    const call = telephoneCall();
    const names = [...new Set(call.turns.map((t) => t.speaker))];
    const callWords = await whisperWords(transcription, call.pcm);
    const scored = callWords.map((w) => {
      const middle = (w.start + w.end) / 2;
      const who = new Set(
        call.turns.filter((t) => t.start <= middle && middle < t.end).map((t) => names.indexOf(t.speaker)),
      );
      return who.size === 1 ? [...who][0] : -1;
    });
    const labels = await diarize(call.pcm, callWords, {
      encoder: await (encoder ??= testSpeakerEncoder(speakerModel)),
      tuning,
    });
    const kept = scored.map((s, i) => [s, labels[i]]).filter(([s]) => s >= 0);
    sets.push(
      summary('real telephone call (pyannote sample, 2 women)', [
        {
          name: 'pyannote sample.wav',
          audioSeconds: 30,
          words: kept.length,
          speakers: names.length,
          found: new Set(labels).size,
          accuracy: Number(
            matchedAccuracy(
              kept.map(([s]) => s),
              kept.map(([, l]) => l),
            ).toFixed(4),
          ),
          correct: Math.round(
            matchedAccuracy(
              kept.map(([s]) => s),
              kept.map(([, l]) => l),
            ) * kept.length,
          ),
          ms: 0,
        },
      ]),
    );
    await engine.close();
  }

  if (args.only !== 'short') {
    const long = [];
    for (const c of LONG_CASES) {
      const conversation = scripted(c.voices, c.pattern, c);
      long.push(
        await measure(
          c.name,
          conversation.pcm,
          conversation.words,
          conversation.words.map((w) => w.speaker),
          c.voices.length,
        ),
      );
    }
    sets.push(summary('long turns (exact word times)', long));
  }

  // The run's date, command line and load averages when it ended are added by recordRun.
  const report = {
    machine: '2 cores (shared with other work while measured), no GPU',
    speaker: speakerModel ?? DEFAULT_SPEAKER_MODEL,
    defaults: { ...DIARIZE_DEFAULTS, ...tuning },
    sets,
  };
  recordRun('diarize', report);
}

// Run as a program (the generators above are also imported by development scripts).
if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
