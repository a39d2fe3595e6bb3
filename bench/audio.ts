// Audio benchmark: word error rate and real-time factor of each whisper model through the addon,
// next to whisper.cpp's own command-line tool (examples/cli, built from the same sources) on the
// same file, same model file and same threads, in the same run. Prints a table and writes its run
// (by command line) into bench/results/audio.json.
//
//   node dist/bench/audio.js [--runs 3] [--models whisper-base,whisper-tiny.en]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import type { TranscribeResult } from '../src/binding.js';
import { Engine } from '../src/engine/engine.js';
import { DEFAULT_VAD_MODEL, findModel, MODELS } from '../src/models/manifest.js';
import { resolveModel } from '../src/models/store.js';
import { sentencesOf, wordsOf } from '../src/audio/words.js';
import { recordedSpeech } from '../test/audio/recorded.js';
import { encode, ensureAudioTools, SENTENCES, sox, speak, VOICES, wordErrors } from '../test/audio/speech.js';
import { recordRun, ROOT as root } from './harness.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    models: {
      type: 'string',
      default: MODELS.filter((m) => m.role === 'whisper')
        .map((m) => m.id)
        .join(','),
    },
  },
});
const runs = Number(values.runs);
const THREADS = 2;
ensureAudioTools();

const cli = `${root}build/whisper-cli`;
if (!existsSync(cli))
  execFileSync('npx', ['cmake-js', 'compile', '--out', 'build', '--target', 'whisper-cli'], {
    cwd: root,
    stdio: 'inherit',
  });

const work = mkdtempSync(join(tmpdir(), 'dm-bench-audio-'));
// The speed file: every WER sentence in one voice, ~40 s, 16 kHz mono WAV (what the CLI reads).
const speedFile = join(work, 'speech.wav');
writeFileSync(speedFile, sox(speak(SENTENCES.join(' '), 'en-us'), [], ['-r', '16000', '-c', '1']));
const speedSeconds = Number(execFileSync('soxi', ['-D', speedFile]).toString());
// Real recorded speech with reference transcripts (LibriVox, card names, JFK; test/audio/recorded.ts).
const recordings = recordedSpeech();

const config = loadConfig(process.env, { logLevel: 'silent' });
const llama = await resolveModel(config.model, { path: config.modelPath });
const vad = await resolveModel(DEFAULT_VAD_MODEL); // the addon checks for speech first, as the service does
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const report: Record<string, unknown> = {
  threads: THREADS,
  runs,
  speedFileSeconds: speedSeconds,
  models: {},
};

for (const id of values.models.split(',')) {
  const model = findModel(id)!;
  const path = await resolveModel(id);
  const engine = await Engine.open({
    modelPath: llama,
    slots: 1,
    threads: THREADS,
    queue: 0,
    contextSize: 512,
    batchSize: 64,
    promptCacheMiB: 0,
  });
  await engine.loadWhisper(path, model.alignmentHeads ?? '', vad);
  const transcribe = async (audio: Buffer) => {
    const session = engine.admit();
    let r: TranscribeResult;
    try {
      r = await session.transcribe({ audio, maxSeconds: 3600, language: 'en' });
    } finally {
      session.close();
    }
    const text = sentencesOf(wordsOf(r.segments, r.samples / 16000, r.energy))
      .map((s) => s.text)
      .join(' ');
    return { text, ms: r.decodeMs };
  };

  // Word error rate: each sentence in two of the four voices, as mp3.
  let errors = 0;
  let words = 0;
  for (const [i, sentence] of SENTENCES.entries()) {
    for (const voice of [VOICES[i % VOICES.length], VOICES[(i + 1) % VOICES.length]]) {
      const e = wordErrors(sentence, (await transcribe(encode(speak(sentence, voice), 'mp3'))).text);
      errors += e.errors;
      words += e.words;
    }
  }
  let realErrors = 0;
  let realWords = 0;
  for (const r of recordings) {
    const e = wordErrors(r.reference, (await transcribe(r.audio)).text);
    realErrors += e.errors;
    realWords += e.words;
  }

  // Speed: addon and CLI alternate on the same WAV; the first addon run (state creation) is a warm-up.
  await transcribe(readFileSync(speedFile));
  const addonMs: number[] = [];
  const cliMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    addonMs.push((await transcribe(readFileSync(speedFile))).ms);
    cliMs.push(cliInferenceMs(path, model.alignmentHeads ?? ''));
  }
  await engine.close();
  const addon = median(addonMs);
  const whisperCli = median(cliMs);
  (report.models as Record<string, unknown>)[id] = {
    syntheticWer: errors / words,
    syntheticWords: words,
    realSpeechWer: realErrors / realWords,
    realSpeechWords: realWords,
    rtfAddon: addon / 1000 / speedSeconds,
    rtfWhisperCli: whisperCli / 1000 / speedSeconds,
    ratio: addon / whisperCli,
    addonMs,
    cliMs,
  };
  console.log(
    `${id}: WER ${((100 * errors) / words).toFixed(1)}% on ${words} words; RTF addon ${(addon / 1000 / speedSeconds).toFixed(3)}, whisper-cli ${(whisperCli / 1000 / speedSeconds).toFixed(3)}, ratio ${(addon / whisperCli).toFixed(2)}`,
  );
  console.log(
    `  real speech: WER ${((100 * realErrors) / realWords).toFixed(1)}% on ${realWords} words in ${recordings.length} recordings`,
  );
}

// The CLI with the addon's decoding settings (greedy, DTW word times, no flash attention,
// non-speech tokens suppressed, token timestamps on through -ojf). Its own accounting: total time
// minus model load time, from whisper_print_timings.
function cliInferenceMs(path: string, heads: string): number {
  const args = [
    '-m',
    path,
    '-f',
    speedFile,
    '-t',
    String(THREADS),
    '-l',
    'en',
    '-bs',
    '1',
    '-nf',
    '-nfa',
    '-sns',
    '--dtw',
    heads,
    '-ojf',
    '-of',
    join(work, 'cli'),
  ];
  const { stderr, status } = spawnSync(cli, args, { encoding: 'utf8' });
  if (status !== 0) throw new Error(`whisper-cli failed: ${stderr.slice(-500)}`);
  const ms = (name: string) => Number(new RegExp(`${name} time =\\s*([\\d.]+) ms`).exec(stderr)?.[1]);
  return ms('total') - ms('load');
}

recordRun('audio', report);
