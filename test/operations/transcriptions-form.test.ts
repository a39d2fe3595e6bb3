// POST /v1/audio/transcriptions against the fake binding (a transcription is "one two three
// four" over two seconds): the five response formats, and hostile forms, each a 4xx envelope
// naming the field or the framing at fault, never a 5xx; the service answers afterwards.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { Transcription } from '../../src/audio/transcription.js';
import { loadConfig } from '../../src/config.js';
import { audioRoutes } from '../../src/http/audio.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { SMALL } from '../helpers/server.js';
import { post } from '../audio/helpers.js';

const AUDIO_MAX = 64 * 1024;
const binding = fakeBinding();
const engine = await Engine.open({ ...SMALL, queue: 2, modelPath: 'fake' }, binding);
await engine.loadWhisper('fake', '');
const transcription = new Transcription(engine, loadConfig({}, { audioMaxBytes: AUDIO_MAX }));
const server = await serve(audioRoutes(transcription), {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 1 << 20,
  log: createLogger('silent'),
});
t.teardown(async () => {
  server.close();
  await engine.close();
});
const url = `http://127.0.0.1:${server.port}/v1/audio/transcriptions`;
const B = 'dmBoundary42';

type Field = [name: string, value: string | Buffer, filename?: string];
function form(fields: Field[], boundary = B): Buffer {
  const chunks: Buffer[] = [];
  for (const [name, value, filename] of fields) {
    const disposition = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n`));
    if (filename !== undefined) chunks.push(Buffer.from('Content-Type: audio/wav\r\n'));
    chunks.push(Buffer.from('\r\n'), Buffer.from(value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}
const audio = Buffer.from('RIFF fake audio bytes');
const valid: Field[] = [
  ['file', audio, 'speech.wav'],
  ['model', 'whisper-1'],
];

/** The reply to a form; `text` is the body when it is not JSON (text, srt, vtt). */
async function send(body: Buffer, type = `multipart/form-data; boundary=${B}`) {
  const res = await post(url, body, type);
  const text = typeof res.json === 'string' ? res.json : '';
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: res.json };
}

t.test('the five response formats', async (t) => {
  const json = await send(form(valid));
  t.equal(json.status, 200);
  t.same(json.json, { text: 'one two three four' });
  const text = await send(form([...valid, ['response_format', 'text']]));
  t.equal(text.text, 'one two three four\n');
  t.match(text.type, /^text\/plain/);
  const srt = await send(form([...valid, ['response_format', 'srt']]));
  t.equal(srt.text, '1\n00:00:00,000 --> 00:00:01,900\none two three four\n');
  const vtt = await send(form([...valid, ['response_format', 'vtt']]));
  t.equal(vtt.text, 'WEBVTT\n\n00:00:00.000 --> 00:00:01.900\none two three four\n');
  const verbose = await send(
    form([
      ...valid,
      ['response_format', 'verbose_json'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
      ['language', 'en'],
      ['prompt', 'Counting.'],
      ['temperature', '0'],
    ]),
  );
  t.equal(verbose.status, 200);
  t.match(verbose.json, {
    task: 'transcribe',
    language: 'en',
    duration: 2,
    text: 'one two three four',
    segments: [{ id: 0, start: 0, end: 1.9, text: 'one two three four' }],
  });
  t.same(
    verbose.json.words.map((w: { word: string }) => w.word),
    ['one', 'two', 'three', 'four'],
  );
  t.ok(verbose.json.words.every((w: { start: number; end: number }) => w.end >= w.start));
  const segmentsOnly = await send(form([...valid, ['response_format', 'verbose_json']]));
  t.notOk('words' in segmentsOnly.json, 'words only when asked for');
  t.equal(segmentsOnly.json.segments.length, 1, 'segments by default');
});

t.test('hostile forms: 4xx envelopes naming the field, never a 5xx', async (t) => {
  const full = form(valid);
  const cases: [string, Buffer, string | undefined, number, RegExp][] = [
    ['no content type', full, '', 415, /^content-type: missing/],
    ['JSON instead of a form', Buffer.from('{}'), 'application/json', 415, /^content-type: "application\/json"/],
    ['no boundary', full, 'multipart/form-data', 400, /^content-type: multipart\/form-data without a boundary/],
    ['a boundary of 71 characters', full, `multipart/form-data; boundary=${'b'.repeat(71)}`, 400, /^content-type: /],
    ['another boundary than declared', form(valid, 'other'), undefined, 400, /does not begin with the boundary/],
    ['truncated before the closing boundary', full.subarray(0, full.length - 10), undefined, 400, /truncated/],
    ['truncated inside the file', full.subarray(0, 115), undefined, 400, /field "file" is not closed .*truncated/],
    ['truncated inside part headers', full.subarray(0, 30), undefined, 400, /ends inside its headers/],
    ['empty body', Buffer.alloc(0), undefined, 400, /does not begin with the boundary/],
    ['missing file', form([['model', 'whisper-1']]), undefined, 400, /^file: required/],
    [
      'file as a text field',
      form([
        ['file', 'abc'],
        ['model', 'whisper-1'],
      ]),
      undefined,
      400,
      /^file: must be a file part/,
    ],
    [
      'empty file',
      form([
        ['file', '', 'a.wav'],
        ['model', 'whisper-1'],
      ]),
      undefined,
      400,
      /^file: empty/,
    ],
    ['missing model', form([['file', audio, 'a.wav']]), undefined, 400, /^model: required/],
    [
      'model as a file',
      form([...valid.slice(0, 1), ['model', 'x', 'm.txt']]),
      undefined,
      400,
      /^model: must be a text field/,
    ],
    [
      'file over the cap',
      form([
        ['file', Buffer.alloc(AUDIO_MAX + 1), 'a.wav'],
        ['model', 'w'],
      ]),
      undefined,
      413,
      /^file: larger than the limit of 65536 bytes/,
    ],
    [
      'a 1 KiB model',
      form([...valid.slice(0, 1), ['model', 'm'.repeat(1024)]]),
      undefined,
      400,
      /^model: longer than the limit of 256 bytes/,
    ],
    [
      'a 9 KiB prompt',
      form([...valid, ['prompt', 'p'.repeat(9000)]]),
      undefined,
      400,
      /^prompt: longer than the limit of 8192 bytes/,
    ],
    ['unknown field', form([...valid, ['diarize', 'true']]), undefined, 400, /^diarize: unknown field/],
    ['model twice', form([...valid, ['model', 'whisper-1']]), undefined, 400, /^model: sent more than once/],
    [
      'bad response_format',
      form([...valid, ['response_format', 'xml']]),
      undefined,
      400,
      /^response_format: must be one of json, text, srt, vtt, verbose_json/,
    ],
    [
      'bad granularity',
      form([...valid, ['response_format', 'verbose_json'], ['timestamp_granularities[]', 'char']]),
      undefined,
      400,
      /^timestamp_granularities\[\]: must be word or segment/,
    ],
    [
      'granularity without verbose_json',
      form([...valid, ['timestamp_granularities[]', 'word']]),
      undefined,
      400,
      /^timestamp_granularities\[\]: needs response_format verbose_json/,
    ],
    ['bad language', form([...valid, ['language', 'English']]), undefined, 400, /^language: must be an ISO-639-1 code/],
    [
      'bad temperature',
      form([...valid, ['temperature', '7']]),
      undefined,
      400,
      /^temperature: must be a number from 0 to 1/,
    ],
    ['stream true', form([...valid, ['stream', 'true']]), undefined, 400, /^stream: must be false/],
    [
      'a field not UTF-8',
      form([...valid, ['prompt', Buffer.from([0xff, 0xfe])]]),
      undefined,
      400,
      /^prompt: not valid UTF-8/,
    ],
    [
      '17 parts',
      form([...valid, ...Array.from({ length: 15 }, (): Field => ['prompt', 'p'])]),
      undefined,
      400,
      /more than 16 parts/,
    ],
    [
      'a part without a name',
      Buffer.from(`--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${B}--`),
      undefined,
      400,
      /a part has no name/,
    ],
    [
      'a part without Content-Disposition',
      Buffer.from(`--${B}\r\nX-A: b\r\n\r\nx\r\n--${B}--`),
      undefined,
      400,
      /no Content-Disposition/,
    ],
    [
      'a malformed header line',
      Buffer.from(`--${B}\r\nnonsense\r\n\r\nx\r\n--${B}--`),
      undefined,
      400,
      /header line is malformed/,
    ],
    [
      'an unclosed quote',
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file\r\n\r\nx\r\n--${B}--`),
      undefined,
      400,
      /unclosed quote/,
    ],
    [
      '8 KiB of part headers',
      Buffer.from(`--${B}\r\nX: ${'h'.repeat(8192)}\r\n\r\nx\r\n--${B}--`),
      undefined,
      400,
      /headers are longer than 4096 bytes/,
    ],
    ['garbage after a boundary', Buffer.from(`--${B}garbage`), undefined, 400, /not followed by a line end/],
  ];
  const before = binding.submitted;
  for (const [name, body, type, status, message] of cases) {
    const res = await send(body, type === undefined ? `multipart/form-data; boundary=${B}` : type);
    t.equal(res.status, status, `${name}: ${status}`);
    t.match(res.json?.error?.message, message, `${name}: ${res.json?.error?.message}`);
  }
  t.equal(binding.submitted, before, 'none reached a slot');
  t.equal((await send(form(valid))).status, 200, 'still serving afterwards');
});
