// POST /v1/audio/transcribe?diarize=<boolean>: the raw audio file is the body; and OpenAI's
// multipart POST /v1/audio/transcriptions (transcriptions.ts) on the same transcription.
import { ERRORS } from '../errors.js';
import type { Transcription } from '../audio/transcription.js';
import type { Route } from './types.js';
import { checkWavLength } from './wav.js';
import { modelRoute } from './model-route.js';
import { transcriptionsRoute } from './transcriptions.js';

const TRANSCRIBE_PATH = '/v1/audio/transcribe';

export function audioRoutes(transcription: Transcription): Route[] {
  return [
    modelRoute(transcription.engine, {
      path: TRANSCRIBE_PATH,
      maxBodyBytes: transcription.settings.audioMaxBytes,
      read: (req) => {
        checkContentType(req.headers['content-type']);
        const diarize = flag(req.query.get('diarize'));
        checkWavLength(req.body);
        return { audio: req.body, diarize };
      },
      run: async ({ audio, diarize }, session) => {
        const out = await transcription.run(audio, diarize, session);
        return { body: out.body, billing: { inputTokens: out.inputTokens }, inferenceMs: out.inferenceMs };
      },
    }),
    transcriptionsRoute(transcription),
  ];
}

function checkContentType(value: string | undefined): void {
  const type = (value ?? '').split(';')[0].trim().toLowerCase();
  if (/^audio\/[a-z0-9.+-]+$/.test(type) || type === 'application/octet-stream') return;
  throw ERRORS.unsupportedMediaType(
    `content-type: ${type ? JSON.stringify(type) + ' is not accepted' : 'missing'}; send the raw audio file with Content-Type audio/* (audio/mpeg, audio/wav...) or application/octet-stream`,
  );
}

function flag(value: string | null): boolean {
  if (value === null || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw ERRORS.invalidRequest(`diarize: must be true or false (got ${JSON.stringify(value)})`);
}
