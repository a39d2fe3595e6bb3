// POST /v1/audio/transcribe behind the HTTP layer: audio bytes -> TranscriptionResponse.
import type { Engine, Session, SpeakerEmbedder } from '../engine/engine.js';
import { ERRORS } from '../errors.js';
import type { Config } from '../config.js';
import type { Segment, TranscriptionResponse, Word } from '../api/transcription.js';
import { sentencesOf, wordsOf } from './words.js';
import { diarize } from './diarize.js';

/** The settings a transcription reads (DM_AUDIO_MAX_BYTES, DM_AUDIO_MAX_SECONDS, DM_AUDIO_LANGUAGE). */
export type AudioLimits = Pick<Config, 'audioMaxBytes' | 'audioMaxSeconds' | 'audioLanguage'>;

export interface BilledTranscript {
  body: TranscriptionResponse;
  /** Input tokens billed: see billedTokens. */
  inputTokens: number;
  /** Time on the slot (decoding and whisper) plus diarization, ms. */
  inferenceMs: number;
}

const SAMPLE_RATE = 16000;
// Billing follows duration: whisper's encoder reads 50 positions per second of audio (1,500 per
// 30-second window), and each is billed as one input token; diarized audio is billed twice.
const TOKENS_PER_SECOND = 50;
const DIARIZE_FACTOR = 2;

function billedTokens(seconds: number, diarize: boolean): number {
  return Math.ceil(seconds * TOKENS_PER_SECOND) * (diarize ? DIARIZE_FACTOR : 1);
}

export class Transcription {
  constructor(
    readonly engine: Engine,
    readonly settings: AudioLimits,
  ) {}

  /**
   * Transcribes `audio` in the request's `session`: its transcription and speaker embeddings are
   * admitted together, so they count against DM_SLOTS + DM_QUEUE and close() waits for both.
   * `language` (a whisper code or "auto") replaces DM_AUDIO_LANGUAGE for this file.
   */
  async run(
    audio: Uint8Array,
    diarize: boolean,
    session: Session,
    language = this.settings.audioLanguage,
  ): Promise<BilledTranscript> {
    if (!this.engine.canTranscribe)
      throw ERRORS.unsupportedRequest('transcription is not enabled on this server: no whisper model is loaded');
    if (audio.length === 0) throw ERRORS.invalidRequest('body: empty; send the audio file bytes as the request body');
    const result = await session.transcribe({
      audio,
      maxSeconds: this.settings.audioMaxSeconds,
      language,
      wantPcm: diarize,
    });
    const duration = result.samples / SAMPLE_RATE;
    const words = wordsOf(result.segments, duration, result.energy);
    let inferenceMs = result.decodeMs;
    let segments: Segment[] = sentencesOf(words);
    if (diarize) {
      const started = performance.now();
      segments = await labelSpeakers(segments, words, result.pcm!, session.speakers, session.signal);
      inferenceMs += performance.now() - started;
    }
    return {
      body: {
        text: segments.map((s) => s.text).join(' '),
        segments,
        duration: Math.round(duration * 1000) / 1000,
        language: null,
      },
      inputTokens: billedTokens(duration, diarize),
      inferenceMs: Math.round(inferenceMs),
    };
  }
}

/** Speaker labels on every word (src/audio/diarize.ts); a segment's speaker is who says most of its words. */
async function labelSpeakers(
  segments: Segment[],
  words: Word[],
  pcm: Float32Array,
  encoder: SpeakerEmbedder,
  signal?: AbortSignal,
) {
  const speakers = await diarize(pcm, words, { encoder, signal });
  if (speakers.length !== words.length)
    throw new Error(`diarization returned ${speakers.length} labels for ${words.length} words`);
  const label = (i: number) => `SPEAKER_${String(i).padStart(2, '0')}`;
  let at = 0;
  return segments.map((s) => {
    const counts = new Map<number, number>();
    const labelled = s.words.map((w) => {
      const who = speakers[at++];
      counts.set(who, (counts.get(who) ?? 0) + 1);
      return { ...w, speaker: label(who) };
    });
    const main = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
    return { ...s, speaker: label(main), words: labelled };
  });
}
