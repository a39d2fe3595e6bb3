// Library entry: the engine without the HTTP server.
//
//   import { open } from 'decision-machine-1';
//   const dm = await open();                       // embedded defaults; DM_* env vars apply
//   const r = await dm.yesNo({ text, statement }); // { statement, answer, probability }
//   await dm.close();
//
// Inputs are the HTTP request bodies and outputs the response bodies; inputs are not validated
// here (the HTTP layer does that), so pass what the TypeScript types describe. Every setting of
// src/config.ts can be passed to open(); audio is off unless asked for ({ audio: 'on' } or
// DM_AUDIO=on), so an embedder that does not transcribe loads no whisper model.
import { DEFAULTS, loadConfig, type Config } from './config.js';
import { openService } from './service.js';
import type { Billed } from './decisions/billing.js';
import type { YesNoInput, YesNoOutput } from './decisions/yes-no.js';
import type { ClassifyInput, ClassifyResult } from './decisions/classify.js';
import type { ClassifyTreeInput, ClassifyTreeResult } from './decisions/classify-tree.js';
import type { RateInput, RateResult } from './decisions/rate.js';
import type { AnswerInput, AnswerOutput } from './decisions/answer.js';
import type { EntitiesInput, EntitiesResult } from './decisions/entities.js';
import type { VerifyInput, VerifyResult } from './decisions/verify.js';
import type { ExtractInput, ExtractResult } from './decisions/extract.js';
import type { Engine, EngineStats } from './engine/engine.js';
import type { TranscriptionResponse } from './api/transcription.js';

export { ServiceError, CancelledError } from './errors.js';
export type { Config } from './config.js';
export type { Billed } from './decisions/billing.js';
export type { YesNoInput, YesNoOutput, YesNoResult } from './decisions/yes-no.js';
export type { ClassifyInput, ClassifyResult } from './decisions/classify.js';
export type { ClassifyTreeInput, ClassifyTreeResult } from './decisions/classify-tree.js';
export type { RateInput, RateResult } from './decisions/rate.js';
export type { AnswerInput, AnswerOutput, AnswerResult } from './decisions/answer.js';
export type { EntitiesInput, EntitiesResult, Entity } from './decisions/entities.js';
export type { VerifyInput, VerifyResult } from './decisions/verify.js';
export type { ExtractInput, ExtractResult } from './decisions/extract.js';
export type { EngineStats } from './engine/engine.js';
export type { TranscriptionResponse } from './api/transcription.js';

export interface CallOptions {
  /** Aborting cancels the call's inference and frees its slot. */
  signal?: AbortSignal;
}

type List<T> = T | { results: T[] };
type Call<I, O> = (input: I, options?: CallOptions) => Promise<O>;

export interface DecisionMachine {
  yesNo: Call<YesNoInput, YesNoOutput>;
  classify: Call<ClassifyInput, List<ClassifyResult>>;
  classifyTree: Call<ClassifyTreeInput, List<ClassifyTreeResult>>;
  rate: Call<RateInput, List<RateResult>>;
  answer: Call<AnswerInput, AnswerOutput>;
  entities: Call<EntitiesInput, List<EntitiesResult>>;
  verify: Call<VerifyInput, List<VerifyResult>>;
  extract: Call<ExtractInput, List<ExtractResult>>;
  /** The same calls, returning the body with what it is billed for (inputChars, inputTokens). */
  billed: {
    yesNo: Call<YesNoInput, Billed<YesNoOutput>>;
    classify: Call<ClassifyInput, Billed<List<ClassifyResult>>>;
    classifyTree: Call<ClassifyTreeInput, Billed<List<ClassifyTreeResult>>>;
    rate: Call<RateInput, Billed<List<RateResult>>>;
    answer: Call<AnswerInput, Billed<AnswerOutput>>;
    entities: Call<EntitiesInput, Billed<List<EntitiesResult>>>;
    verify: Call<VerifyInput, Billed<List<VerifyResult>>>;
    extract: Call<ExtractInput, Billed<List<ExtractResult>>>;
  };
  /** Present with audio on: the transcript of an audio file, with speakers when `diarize`. */
  transcribe?: (audio: Uint8Array, options?: CallOptions & { diarize?: boolean }) => Promise<TranscriptionResponse>;
  stats(): EngineStats;
  /** Waits for calls in flight, then frees the model. */
  close(): Promise<void>;
}

interface Runner<I, O> {
  run(input: I, signal?: AbortSignal): Promise<Billed<O>>;
}

// Each call is admitted once for all it runs (its long-text windows included), as an HTTP request is.
const billed =
  <I, O>(engine: Engine, d: Runner<I, O>): Call<I, Billed<O>> =>
  (input, o) =>
    engine.admitted(() => d.run(input, o?.signal));
const body =
  <I, O>(engine: Engine, d: Runner<I, O>): Call<I, O> =>
  async (input, o) =>
    (await billed(engine, d)(input, o)).body;

const LIBRARY_DEFAULTS: Readonly<Config> = Object.freeze({ ...DEFAULTS, audio: 'off' });

export async function open(overrides: Partial<Config> = {}): Promise<DecisionMachine> {
  const s = await openService(loadConfig(process.env, overrides, LIBRARY_DEFAULTS));
  const transcription = s.transcription;
  return {
    yesNo: body(s.engine, s.yesNo),
    classify: body(s.engine, s.classify),
    classifyTree: body(s.engine, s.classifyTree),
    rate: body(s.engine, s.rate),
    answer: body(s.engine, s.answer),
    entities: body(s.engine, s.entities),
    verify: body(s.engine, s.verify),
    extract: body(s.engine, s.extract),
    billed: {
      yesNo: billed(s.engine, s.yesNo),
      classify: billed(s.engine, s.classify),
      classifyTree: billed(s.engine, s.classifyTree),
      rate: billed(s.engine, s.rate),
      answer: billed(s.engine, s.answer),
      entities: billed(s.engine, s.entities),
      verify: billed(s.engine, s.verify),
      extract: billed(s.engine, s.extract),
    },
    ...(transcription && {
      transcribe: async (audio, o) => (await transcription.run(audio, o?.diarize ?? false, o?.signal)).body,
    }),
    stats: () => s.engine.stats(),
    close: () => s.engine.close(),
  };
}
