// POST /v1/audio/transcribe on the real whisper model: all seven formats, word error rate on
// synthetic speech, word timestamps against known ground truth, limits, cancellation, 529.
import t from 'tap';
import { audioServer, post } from './helpers.js';
import {
  alignedPairs,
  encode,
  ensureAudioTools,
  FORMATS,
  normalise,
  samplesOf,
  SENTENCES,
  sox,
  speak,
  VOICES,
  wavOf,
  wordErrors,
  type Format,
} from './speech.js';

// Every case runs the real model on two cores: more than tap's default 600 s when the machine is shared.
t.setTimeout(1_800_000);
ensureAudioTools();
const server = await audioServer();
t.teardown(() => server.close());

interface Word {
  word: string;
  start: number;
  end: number;
  speaker?: string;
}
interface Segment {
  start: number;
  end: number;
  text: string;
  words: Word[];
  speaker?: string;
}

/** What is wrong with a TranscriptionResponse without speakers, as readable lines (none: fine). */
function shapeProblems(body: any, duration: number): string[] {
  const problems: string[] = [];
  if (body.language !== null) problems.push('language is not null');
  if (Math.abs(body.duration - duration) >= 0.1) problems.push(`duration ${body.duration}, expected ${duration}`);
  if (body.text !== body.segments.map((s: Segment) => s.text).join(' '))
    problems.push('text is not the segment texts joined');
  let last = 0;
  for (const s of body.segments as Segment[]) {
    if ('speaker' in s) problems.push('segment speaker without diarize');
    if (!s.words.length || s.start !== s.words[0].start || s.end !== s.words[s.words.length - 1].end)
      problems.push(`segment "${s.text}" bounds`);
    for (const w of s.words) {
      if ('speaker' in w) problems.push('word speaker without diarize');
      if (!(w.start >= last && w.start <= w.end && w.end <= body.duration))
        problems.push(`word ${w.word} ${w.start}-${w.end} out of order`);
      last = w.start;
    }
  }
  return problems;
}

t.test('every format decodes and transcribes: mp3, m4a, wav, ogg, opus, flac, webm', async (t) => {
  const sentence = SENTENCES[1];
  const wav = speak(sentence, 'en-us');
  const { samples, rate } = samplesOf(wav);
  for (const format of Object.keys(FORMATS) as Format[]) {
    const file = encode(wav, format);
    const res = await post(server.url, file, FORMATS[format].type);
    t.equal(res.status, 200, `${format}: 200`);
    t.same(shapeProblems(res.json, samples.length / rate), [], `${format}: response shape`);
    const { errors, words } = wordErrors(sentence, res.json.text);
    t.ok(errors / words <= 0.25, `${format}: "${res.json.text}" (WER ${(errors / words).toFixed(2)})`);
    t.equal(res.headers.get('x-input-tokens'), String(Math.ceil(res.json.duration * 50)), 'billed by duration');
    t.ok(Number(res.headers.get('x-inference-ms')) > 0, 'x-inference-ms');
  }
});

t.test('word error rate on synthetic speech in four voices stays under 20%', async (t) => {
  let errors = 0;
  let words = 0;
  for (const [i, sentence] of SENTENCES.entries()) {
    const voice = VOICES[i % VOICES.length];
    const res = await post(server.url, encode(speak(sentence, voice), 'mp3'), 'audio/mpeg');
    t.equal(res.status, 200);
    const e = wordErrors(sentence, res.json.text);
    errors += e.errors;
    words += e.words;
    t.comment(`${voice}: ${res.json.text} (${e.errors}/${e.words})`);
  }
  t.comment(`synthetic WER ${(errors / words).toFixed(3)} over ${words} words`);
  t.ok(errors / words < 0.2, `WER ${(errors / words).toFixed(3)}`);
});

t.test('word timestamps within 0.3 s of the truth for at least 90% of words', async (t) => {
  // Words synthesised one by one, trimmed of silence and joined with known gaps, in every voice.
  const text =
    'Seven brave sailors crossed the stormy northern ocean looking for a quiet harbour where they could rest. ' +
    'The old lighthouse keeper watched the ships arrive every morning and wrote their names in a small green book.';
  const rate = 22050;
  const one = (w: string) => normalise(w).join(' ');
  let good = 0;
  let total = 0;
  for (const voice of VOICES) {
    const parts: Float32Array[] = [];
    const truth: { word: string; start: number; end: number }[] = [];
    let at = 0.5;
    parts.push(new Float32Array(Math.round(at * rate)));
    for (const [i, word] of text.split(' ').entries()) {
      const trimmed = samplesOf(
        sox(speak(word, voice), ['silence', '1', '0.02', '1%', 'reverse', 'silence', '1', '0.02', '1%', 'reverse']),
      ).samples;
      truth.push({ word, start: at, end: at + trimmed.length / rate });
      const gap = 0.15 + 0.1 * (i % 4);
      parts.push(trimmed, new Float32Array(Math.round(gap * rate)));
      at += trimmed.length / rate + gap;
    }
    const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((off, p) => (all.set(p, off), off + p.length), 0);
    const res = await post(server.url, wavOf(all, rate), 'audio/wav');
    t.equal(res.status, 200);
    const words: Word[] = res.json.segments.flatMap((s: Segment) => s.words);
    // Line the transcript up with the truth word by word (a misheard word keeps its time); a
    // truth word with no counterpart counts as wrong.
    const pairs = alignedPairs(
      truth.map((w) => one(w.word)),
      words.map((w) => one(w.word)),
    );
    const misses: string[] = [];
    let right = 0;
    for (const [k, j] of pairs) {
      const w = words[j]!;
      if (Math.abs(w.start - truth[k]!.start) <= 0.3 && Math.abs(w.end - truth[k]!.end) <= 0.3) right++;
      else
        misses.push(
          `${w.word} ${w.start}-${w.end} vs ${truth[k]!.word} ${truth[k]!.start.toFixed(2)}-${truth[k]!.end.toFixed(2)}`,
        );
    }
    t.comment(
      `${voice}: ${right}/${truth.length} within 0.3 s (${pairs.length} lined up); off: ${misses.join('; ') || 'none'}`,
    );
    good += right;
    total += truth.length;
  }
  t.comment(`timestamps: ${good}/${total} words within 0.3 s at start and end`);
  t.ok(good / total >= 0.9, `${good}/${total} within 0.3 s`);
});

t.test('noise, a chord and mains hum are not speech: empty transcripts, no invented words', async (t) => {
  // Without the voice activity model whisper-base writes "I'm going to put the", "I'm going to go
  // back to the next video." and "Thank you." for these three files.
  const rate = 16000;
  const tone = (hz: number, i: number) => Math.sin((2 * Math.PI * hz * i) / rate);
  const sounds: [string, Float32Array][] = [
    ['white noise', Float32Array.from({ length: 4 * rate }, () => (Math.random() * 2 - 1) * 0.3)],
    [
      'an A major chord',
      Float32Array.from({ length: 4 * rate }, (_, i) => (0.2 * (tone(440, i) + tone(554, i) + tone(659, i))) / 3),
    ],
    [
      '50 Hz hum with hiss',
      Float32Array.from({ length: 4 * rate }, (_, i) => 0.05 * tone(50, i) + (Math.random() * 2 - 1) * 0.01),
    ],
  ];
  for (const [name, samples] of sounds) {
    const res = await post(server.url, wavOf(samples, rate), 'audio/wav');
    t.equal(res.status, 200, `${name}: 200`);
    t.equal(res.json.text, '', `${name}: no text`);
    t.same(res.json.segments, [], `${name}: no segments`);
  }
});

t.test('a long silence is no speech: 200 with an empty transcript', async (t) => {
  const res = await post(server.url, encode(wavOf(new Float32Array(16000 * 5), 16000), 'flac'), 'audio/flac');
  t.equal(res.status, 200);
  t.equal(res.json.text, '');
  t.same(res.json.segments, []);
  t.equal(res.json.duration, 5);
});

t.test('request errors are clear 4xx', async (t) => {
  const wav = speak('Hello there.', 'en-us');
  const wrongType = await post(server.url, wav, 'application/json');
  t.equal(wrongType.status, 415);
  t.equal(wrongType.json.error.code, 'unsupported_media_type');
  const empty = await post(server.url, Buffer.alloc(0), 'audio/wav');
  t.equal(empty.status, 400);
  t.match(empty.json.error.message, /empty/);
  const badFlag = await post(server.url, wav, 'audio/wav', '?diarize=maybe');
  t.equal(badFlag.status, 400);
  t.match(badFlag.json.error.message, /^diarize:/);
  const garbage = await post(
    server.url,
    Buffer.from('this is plainly not an audio file at all, just words'),
    'audio/mpeg',
  );
  t.equal(garbage.status, 400);
  t.equal(garbage.json.error.code, 'invalid_request');
});

t.test('byte and duration caps answer 413; a small file that decodes past the cap too', async (t) => {
  const small = await audioServer({ DM_AUDIO_MAX_BYTES: '200000', DM_AUDIO_MAX_SECONDS: '10' });
  t.teardown(() => small.close());
  const big = await post(small.url, Buffer.alloc(300000, 1), 'audio/wav');
  t.equal(big.status, 413);
  t.equal(big.json.error.code, 'payload_too_large');
  // Two minutes of near-silence: a few kB of mp3, far past 10 s once decoded.
  const long = encode(wavOf(new Float32Array(16000 * 120), 16000), 'mp3', ['-ar', '8000', '-b:a', '8k']);
  t.ok(long.length < 200000);
  const res = await post(small.url, long, 'audio/mpeg');
  t.equal(res.status, 413);
  t.match(res.json.error.message, /at most 10\.0 s/);
});

t.test('a client that disconnects frees its slot within a second', async (t) => {
  const long = encode(speak(SENTENCES.join(' '), 'en-gb'), 'mp3');
  const ac = new AbortController();
  const pending = fetch(server.url, {
    method: 'POST',
    body: long,
    headers: { 'content-type': 'audio/mpeg' },
    signal: ac.signal,
  }).catch(() => undefined);
  while (server.engine.stats().running === 0) await new Promise((r) => setTimeout(r, 20));
  ac.abort();
  await pending;
  const started = Date.now();
  while (server.engine.stats().running > 0 && Date.now() - started < 3000) await new Promise((r) => setTimeout(r, 20));
  t.equal(server.engine.stats().running, 0);
  t.ok(Date.now() - started < 1000, `slot free after ${Date.now() - started} ms`);
});

t.test('more requests than slots and queue: 529 at once', async (t) => {
  const long = encode(speak(SENTENCES.slice(0, 3).join(' '), 'en-us'), 'ogg');
  const replies = await Promise.all([0, 1, 2, 3].map(() => post(server.url, long, 'audio/ogg')));
  const statuses = replies.map((r) => r.status).sort();
  t.ok(statuses.includes(529), `statuses ${statuses}`);
  t.ok(statuses.includes(200));
  t.ok(replies.every((r) => r.status === 200 || r.json.error.code === 'overloaded'));
});
