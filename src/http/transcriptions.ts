// POST /v1/audio/transcriptions: OpenAI's multipart form on the same transcription as
// /v1/audio/transcribe (one engine session, the same words and segments), so Whisper clients
// work unchanged. Fields: file (required), model (required; any id, the loaded whisper model
// answers), language, prompt and temperature (accepted, not applied: decoding is greedy and the
// addon takes no initial prompt), response_format json | text | srt | vtt | verbose_json,
// timestamp_granularities[] word | segment, stream (false only). Anything else is a 400 naming it.
import { ERRORS } from '../errors.js';
import type { Transcription } from '../audio/transcription.js';
import type { Segment, TranscriptionResponse, Word } from '../api/transcription.js';
import { boundaryOf, parseForm, textOf, type FormPart } from './multipart.js';
import type { ApiReply, Route } from './types.js';
import { checkWavLength } from './wav.js';
import { modelRoute } from './model-route.js';

export const TRANSCRIPTIONS_PATH = '/v1/audio/transcriptions';
export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
type ResponseFormat = (typeof RESPONSE_FORMATS)[number];
const GRANULARITIES = ['word', 'segment'] as const;
type Granularity = (typeof GRANULARITIES)[number];

const FIELDS = new Set([
  'file',
  'model',
  'language',
  'prompt',
  'response_format',
  'temperature',
  'timestamp_granularities[]',
  'stream',
]);
const LANGUAGE = /^([a-z]{2,3}|haw|yue)$/;
/** The form around the file: headers and the text fields (prompt up to 8 KiB). */
const FORM_OVERHEAD_BYTES = 64 * 1024;

export interface TranscriptionsRequest {
  file: Buffer;
  language?: string;
  format: ResponseFormat;
  granularities: Set<Granularity>;
}

export function transcriptionsRoute(transcription: Transcription): Route {
  const { audioMaxBytes } = transcription.settings;
  return modelRoute(transcription.engine, {
    path: TRANSCRIPTIONS_PATH,
    maxBodyBytes: audioMaxBytes + FORM_OVERHEAD_BYTES,
    read: (req) => {
      const form = readForm(req.body, req.headers['content-type'], audioMaxBytes);
      checkWavLength(form.file);
      return form;
    },
    run: async (form, session) => {
      const language = form.language ?? transcription.settings.audioLanguage;
      const out = await transcription.run(form.file, false, session, language);
      const reply = formatted(out.body, form, language === 'auto' ? null : language);
      return { ...reply, billing: { inputTokens: out.inputTokens }, inferenceMs: out.inferenceMs };
    },
  });
}

/** The form's fields, checked: 400 (413 for the file) naming the field at fault. */
export function readForm(body: Buffer, contentType: string | undefined, maxFileBytes: number): TranscriptionsRequest {
  const parts = parseForm(body, boundaryOf(contentType), {
    maxParts: 16,
    maxHeaderBytes: 4096,
    maxFieldBytes: 256,
    fieldBytes: { prompt: 8192 },
    maxFileBytes,
  });
  const seen = new Map<string, FormPart[]>();
  for (const part of parts) {
    if (!FIELDS.has(part.name))
      throw ERRORS.invalidRequest(`${part.name.slice(0, 64)}: unknown field; the form takes ${[...FIELDS].join(', ')}`);
    seen.set(part.name, [...(seen.get(part.name) ?? []), part]);
  }
  const one = (name: string): FormPart | undefined => {
    const all = seen.get(name);
    if (all && all.length > 1) throw ERRORS.invalidRequest(`${name}: sent more than once`);
    return all?.[0];
  };
  const text = (name: string) => {
    const part = one(name);
    if (part?.filename !== undefined) throw ERRORS.invalidRequest(`${name}: must be a text field, not a file`);
    return part && textOf(part);
  };

  const file = one('file');
  if (!file) throw ERRORS.invalidRequest('file: required; send the audio file as the form field "file"');
  if (file.filename === undefined)
    throw ERRORS.invalidRequest('file: must be a file part (with a filename in its Content-Disposition)');
  if (file.data.length === 0) throw ERRORS.invalidRequest('file: empty');
  const model = text('model');
  if (!model) throw ERRORS.invalidRequest('model: required (any id: the loaded whisper model answers)');
  const language = text('language') || undefined;
  if (language !== undefined && !LANGUAGE.test(language))
    throw ERRORS.invalidRequest(`language: must be an ISO-639-1 code such as "en" (got ${JSON.stringify(language)})`);
  text('prompt');
  const temperature = text('temperature');
  if (temperature !== undefined && !(/^\d+(\.\d+)?$/.test(temperature) && Number(temperature) <= 1))
    throw ERRORS.invalidRequest(`temperature: must be a number from 0 to 1 (got ${JSON.stringify(temperature)})`);
  const stream = text('stream');
  if (stream !== undefined && stream !== 'false')
    throw ERRORS.invalidRequest('stream: must be false; the transcript is sent whole');
  const format = (text('response_format') || 'json') as ResponseFormat;
  if (!RESPONSE_FORMATS.includes(format))
    throw ERRORS.invalidRequest(
      `response_format: must be one of ${RESPONSE_FORMATS.join(', ')} (got ${JSON.stringify(format)})`,
    );
  const granularities = new Set<Granularity>();
  for (const part of seen.get('timestamp_granularities[]') ?? []) {
    const value = textOf(part) as Granularity;
    if (!GRANULARITIES.includes(value))
      throw ERRORS.invalidRequest(`timestamp_granularities[]: must be word or segment (got ${JSON.stringify(value)})`);
    granularities.add(value);
  }
  if (granularities.size > 0 && format !== 'verbose_json')
    throw ERRORS.invalidRequest('timestamp_granularities[]: needs response_format verbose_json');
  if (granularities.size === 0) granularities.add('segment');
  return { file: file.data, language, format, granularities };
}

/** The transcript in the asked format. */
export function formatted(body: TranscriptionResponse, form: TranscriptionsRequest, language: string | null): ApiReply {
  switch (form.format) {
    case 'json':
      return { status: 200, body: { text: body.text } };
    case 'text':
      return { status: 200, body: `${body.text}\n`, contentType: 'text/plain; charset=utf-8' };
    case 'srt':
      return { status: 200, body: srt(body.segments), contentType: 'application/x-subrip; charset=utf-8' };
    case 'vtt':
      return { status: 200, body: vtt(body.segments), contentType: 'text/vtt; charset=utf-8' };
    case 'verbose_json':
      return {
        status: 200,
        body: {
          task: 'transcribe',
          language,
          duration: body.duration,
          text: body.text,
          ...(form.granularities.has('segment') && {
            segments: body.segments.map((s, id) => ({ id, start: s.start, end: s.end, text: s.text })),
          }),
          ...(form.granularities.has('word') && {
            words: body.segments.flatMap((s) =>
              s.words.map((w: Word) => ({ word: w.word, start: w.start, end: w.end })),
            ),
          }),
        },
      };
  }
}

function srt(segments: Segment[]): string {
  return segments.map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${s.text}\n`).join('\n');
}

function vtt(segments: Segment[]): string {
  return `WEBVTT\n\n${segments.map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${s.text}\n`).join('\n')}`;
}

/** hh:mm:ss,mmm (SubRip) or hh:mm:ss.mmm (WebVTT). */
function clock(seconds: number, mark: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${mark}${pad(ms % 1000, 3)}`;
}
