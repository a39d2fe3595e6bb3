// Library entry: the engine without the HTTP server.
//
//   import { open } from 'decision-machine-1';
//   const dm = await open();                       // embedded defaults; DM_* env vars apply
//   const r = await dm.yesNo({ text, statement }); // { statement, answer, probability }
//   await dm.close();
//
// One method per capability of the table (src/decisions/capabilities.ts), named in camelCase.
// Inputs are the HTTP request bodies and outputs the response bodies; inputs are validated as HTTP
// validates them (the same schema and cross-field rules), refused with the same ServiceError. Every
// setting of src/config.ts can be passed to open(); audio is off unless asked for ({ audio: 'on' }
// or DM_AUDIO=on), so an embedder that does not transcribe loads no whisper model. The heads fitted
// in the configured store (DM_DATABASE_URL) apply as they do in the server; dm.fit() fits more.
import { DEFAULTS, loadConfig, type Config } from './config.js';
import { openService } from './service.js';
import { openStore, type Store } from './store/store.js';
import { fitHeads, parseExamples, type SignatureReport } from './heads/fit.js';
import { modelSha256 } from './models/identity.js';
import type { Service } from './http/routes.js';
import type { BilledBody } from './decisions/billing.js';
import type { Bodies } from './decisions/capabilities.js';
import type { EngineStats } from './engine/engine.js';
import type { TranscriptionResponse } from './api/transcription.js';

export { ServiceError, CancelledError } from './errors.js';
export type { Config } from './config.js';
export type { BilledBody } from './decisions/billing.js';
export type { YesNoInput, YesNoOutput, YesNoResult } from './decisions/yes-no.js';
export type { ClassifyInput, ClassifyResult } from './decisions/classify.js';
export type { ClassifyTreeInput, ClassifyTreeResult } from './decisions/classify-tree.js';
export type { RateInput, RateResult } from './decisions/rate.js';
export type { AnswerInput, AnswerOutput, AnswerResult } from './decisions/answer.js';
export type { EntitiesInput, EntitiesResult, Entity } from './decisions/entities.js';
export type { VerifyInput, VerifyResult } from './decisions/verify.js';
export type { ExtractInput, ExtractResult } from './decisions/extract.js';
export type { EngineStats } from './engine/engine.js';
export type { SignatureReport } from './heads/fit.js';
export type { TranscriptionResponse } from './api/transcription.js';

export interface CallOptions {
  /** Aborting cancels the call's inference and frees its slot. */
  signal?: AbortSignal;
}

type Call<I, O> = (input: I, options?: CallOptions) => Promise<O>;

/** `dm.<capability>`: the response body. */
export type Calls = { [M in keyof Bodies]: Call<Bodies[M]['input'], Bodies[M]['output']> };
/** `dm.billed.<capability>`: the body with what it is billed for (inputChars, inputTokens). */
export type BilledCalls = { [M in keyof Bodies]: Call<Bodies[M]['input'], BilledBody<Bodies[M]['output']>> };

export interface DecisionMachine extends Calls {
  /** The same calls, returning the body with what it is billed for (inputChars, inputTokens). */
  billed: BilledCalls;
  /** Present with audio on: the transcript of an audio file, with speakers when `diarize`. */
  transcribe?: (audio: Uint8Array, options?: CallOptions & { diarize?: boolean }) => Promise<TranscriptionResponse>;
  /**
   * Fits heads on labelled examples (JSONL, one {cap, req, expect} per line: see docs/capabilities.md)
   * and stores them; the calls apply them at once. The report has a line per decision signature.
   */
  fit(jsonl: string, options?: { progress?: NodeJS.WritableStream }): Promise<SignatureReport[]>;
  stats(): EngineStats;
  /** Waits for calls in flight, then frees the model. */
  close(): Promise<void>;
}

const LIBRARY_DEFAULTS: Readonly<Config> = Object.freeze({ ...DEFAULTS, audio: 'off' });

export async function open(overrides: Partial<Config> = {}): Promise<DecisionMachine> {
  const config = loadConfig(process.env, overrides, LIBRARY_DEFAULTS);
  const store = await openStore(config.databaseUrl);
  try {
    return machine(await openService(config, store), store, await modelSha256(config));
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * The library over an opened service: each call is validated by its capability's validator, then
 * admitted once (Engine.admit) and its decision handed that Session for all it runs (its long-text
 * windows included), the Session closed once it is answered, as an HTTP request is.
 */
function machine(s: Service, store: Store, model: string): DecisionMachine {
  const billed: Record<string, Call<unknown, BilledBody<unknown>>> = {};
  const calls: Record<string, Call<unknown, unknown>> = {};
  for (const c of s.capabilities) {
    const call: Call<unknown, BilledBody<unknown>> = async (input, o) => {
      const valid = c.validate(input);
      const session = s.engine.admit({ signal: o?.signal });
      try {
        return await c.decision.run(valid, session);
      } finally {
        session.close();
      }
    };
    billed[c.capability.method] = call;
    calls[c.capability.method] = async (input, o) => (await call(input, o)).body;
  }
  const transcription = s.transcription;
  return {
    ...(calls as Calls),
    billed: billed as BilledCalls,
    ...(transcription && {
      transcribe: async (audio, o) => {
        const diarize = o?.diarize ?? false;
        const session = s.engine.admit({ signal: o?.signal });
        try {
          return (await transcription.run(audio, diarize, session)).body;
        } finally {
          session.close();
        }
      },
    }),
    fit: async (jsonl, o) => {
      const reports = await fitHeads(s.engine, parseExamples(jsonl), { store, model, progress: o?.progress });
      await s.heads?.reload();
      return reports;
    },
    stats: () => s.engine.stats(),
    close: async () => {
      s.heads?.close();
      await s.engine.close();
      await store.close();
    },
  };
}
