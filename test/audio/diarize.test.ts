// Diarization on conversations made here from espeak-ng voices (turns and word times known):
// the number of speakers is found and >= 90% of words get the right speaker after best label
// matching; SPEAKER order is first heard; edge cases. The conversations differ from the ones
// bench/eval/diarize.ts chose the threshold on (other turn orders, gaps and lines).
import t, { type Test } from 'tap';
import { diarize } from '../../src/audio/diarize.js';
import { testSpeakerEncoder } from '../helpers/model.js';
import { convertCamplusCheckpoint } from '../../src/models/converters/campplus.js';
import { CancelledError } from '../../src/errors.js';
import {
  conversation,
  ensureSpeechTools,
  LINES,
  matchedAccuracy,
  speak16k,
  type Turn,
} from '../helpers/speech-conversation.js';

ensureSpeechTools();
const encoder = await testSpeakerEncoder();

/** Turns for `pattern` over `voices`, lines taken from the end of LINES backwards. */
function turns(voices: string[], pattern: number[]): Turn[] {
  return pattern.map((v, i) => ({ voice: voices[v], text: LINES[LINES.length - 1 - (i % LINES.length)] }));
}

async function check(t: Test, voices: string[], pattern: number[], seed: number): Promise<void> {
  const c = conversation(turns(voices, pattern), { seed, minGap: 0.15, maxGap: 0.8 });
  const labels = await diarize(c.pcm, c.words, { encoder });
  const truth = c.words.map((w) => w.speaker);
  const accuracy = matchedAccuracy(truth, labels);
  t.equal(new Set(labels).size, voices.length, `${voices.length} speakers found`);
  t.ok(accuracy >= 0.9, `${(100 * accuracy).toFixed(1)}% of ${labels.length} words on the right speaker (>= 90%)`);
  t.equal(labels[0], 0, 'the first voice heard is speaker 0');
  const firstOf = [...new Set(labels)];
  t.same(
    firstOf,
    [...firstOf].sort((a, b) => a - b),
    'speakers are numbered in the order they are first heard',
  );
}

t.test('two speakers: en-us+m3 and en+f2', (t) => check(t, ['en-us+m3', 'en+f2'], [1, 0, 1, 1, 0, 1, 0, 0, 1], 11));

t.test('three speakers: en-us+m3, en+f2, en+m7', (t) =>
  check(t, ['en-us+m3', 'en+f2', 'en+m7'], [2, 0, 1, 0, 2, 1, 1, 2, 0, 2, 1, 0], 12),
);

t.test('two speakers of one accent (British): en+m7 and en+f4', (t) =>
  check(t, ['en+m7', 'en+f4'], [0, 1, 1, 0, 1, 0, 0, 1], 13),
);

t.test('short turns: a 13 s dialog of a US man and a British woman, four turns of ~3 s, gets 2 speakers', async (t) => {
  const c = conversation(
    [
      { voice: 'en-us+m3', text: 'Did you manage to look at the budget numbers yet?' },
      { voice: 'en+f2', text: 'Yes, the travel costs look far too high to me.' },
      { voice: 'en-us+m3', text: 'I agree, we should cut them before Friday.' },
      { voice: 'en+f2', text: 'Fine, I will write to the whole team today.' },
    ],
    { seed: 16, minGap: 0.15, maxGap: 0.4 },
  );
  const labels = await diarize(c.pcm, c.words, { encoder });
  const accuracy = matchedAccuracy(
    c.words.map((w) => w.speaker),
    labels,
  );
  t.equal(new Set(labels).size, 2, '2 speakers found');
  t.ok(accuracy >= 0.9, `${(100 * accuracy).toFixed(1)}% of ${labels.length} words on the right speaker (>= 90%)`);
});

t.test('a quiet recording gets the same speakers (the encoder levels the file first)', async (t) => {
  const c = conversation(turns(['en-us+f4', 'en+m7'], [0, 1, 0, 1, 0, 1]), { seed: 15 });
  const loud = await diarize(c.pcm, c.words, { encoder });
  const quiet = await diarize(
    c.pcm.map((x) => x * 0.03),
    c.words,
    { encoder },
  );
  t.same(quiet, loud);
  t.equal(new Set(loud).size, 2);
});

t.test('one speaker is one speaker', async (t) => {
  const c = conversation(turns(['en+f2'], [0, 0, 0, 0, 0, 0]), { seed: 14 });
  const labels = await diarize(c.pcm, c.words, { encoder });
  t.same([...new Set(labels)], [0]);
});

t.test('edge cases', async (t) => {
  const pcm = speak16k('Hello there, this is a short test of one voice.', 'en-us');
  t.same(await diarize(pcm, [], { encoder }), [], 'no words, no speakers');
  t.same(await diarize(pcm, [{ start: 0.2, end: 0.5 }], { encoder }), [0], 'one word');
  const beyond = await diarize(
    pcm,
    [
      { start: 0.1, end: 0.4 },
      { start: 99, end: 100 },
      { start: 0.5, end: 0.2 },
    ],
    { encoder },
  );
  t.same(beyond, [0, 0, 0], 'words past the end or reversed are clamped, not an error');
  const ac = new AbortController();
  ac.abort();
  await t.rejects(
    diarize(pcm, [{ start: 0, end: 1 }], { encoder, signal: ac.signal }),
    CancelledError,
    'an aborted signal cancels',
  );
});

t.test('the CAM++ converter refuses what is not a zip state_dict', async (t) => {
  t.throws(() => convertCamplusCheckpoint(Buffer.from('not a checkpoint at all')), /zip/);
  t.throws(() => convertCamplusCheckpoint(Buffer.alloc(0)), /zip/);
});

t.test('the encoder is CAM++: its dims are what src/binding.ts types', async (t) => {
  t.same(encoder.dims, { mels: 80, embedding: 192, partialFrames: 160, maxPartialFrames: 1000 });
});

t.test('the encoder refuses bad partials with a clear error', async (t) => {
  t.throws(() => encoder.embed(new Float32Array(16000), Int32Array.of(0), Int32Array.of(0), 1), /length 1\.\.1000/);
  t.throws(() => encoder.embed(new Float32Array(16000), Int32Array.of(-1), Int32Array.of(10), 1), /start >= 0/);
  t.throws(() => encoder.embed(new Float32Array(16000), Int32Array.of(0), Int32Array.of(10), Number.NaN), /gain/);
  const empty = await encoder.embed(new Float32Array(0), new Int32Array(0), new Int32Array(0), 1);
  t.equal(empty.length, 0);
  const silent = await encoder.embed(new Float32Array(8000), Int32Array.of(0), Int32Array.of(160), 1);
  t.equal(silent.length, encoder.dims.embedding, 'silence still gives an embedding (past the end reads as zeros)');
});
