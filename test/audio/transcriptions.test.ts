// The official openai client's audio.transcriptions.create, unchanged, against
// POST /v1/audio/transcriptions on the real whisper model: the same text as
// /v1/audio/transcribe for the same WAV, word times included, and the text format.
import t from 'tap';
import OpenAI, { toFile } from 'openai';
import { audioServer, post } from './helpers.js';
import { ensureAudioTools, SENTENCES, speak } from './speech.js';

t.setTimeout(1_800_000);
ensureAudioTools();
const server = await audioServer();
t.teardown(() => server.close());
const client = new OpenAI({ apiKey: 'unused', baseURL: server.url.replace(/\/audio\/transcribe$/, '') });
const wav = speak(SENTENCES[0]!);

t.test('verbose_json with words: the same transcript as /v1/audio/transcribe', async (t) => {
  const raw = await post(server.url, wav, 'audio/wav');
  t.equal(raw.status, 200);
  const started = performance.now();
  const verbose = await client.audio.transcriptions.create({
    file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }),
    model: 'whisper-1',
    response_format: 'verbose_json',
    timestamp_granularities: ['word', 'segment'],
  });
  t.comment(
    `openai client: "${verbose.text}" in ${Math.round(performance.now() - started)} ms; /v1/audio/transcribe: "${raw.json.text}"`,
  );
  t.equal(verbose.text, raw.json.text, 'the same text');
  t.equal(verbose.duration, raw.json.duration);
  const words = raw.json.segments.flatMap((s: { words: { word: string; start: number; end: number }[] }) => s.words);
  t.ok(verbose.words && verbose.words.length > 5, `${verbose.words?.length} words`);
  t.same(
    verbose.words,
    words.map(({ word, start, end }: { word: string; start: number; end: number }) => ({ word, start, end })),
    'the same words and times',
  );
  t.ok(
    verbose.words!.every((w, i, all) => w.start <= w.end && (i === 0 || all[i - 1]!.start <= w.start)),
    'word times in order',
  );
  t.equal(verbose.segments?.length, raw.json.segments.length);
});

t.test('response_format text and json', async (t) => {
  const text = await client.audio.transcriptions.create({
    file: await toFile(wav, 'speech.wav'),
    model: 'whisper-1',
    response_format: 'text',
    language: 'en',
  });
  t.type(text, 'string');
  const json = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'whisper-1' });
  t.equal(String(text).trim(), json.text, 'text is the json text');
  t.match(json.text.toLowerCase(), /quick brown fox/);
});
