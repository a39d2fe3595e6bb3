// Library entry: the engine without the HTTP server.
//
//   import { open } from 'decision-machine-1';
//   const dm = await open();                       // embedded defaults; DM_* env vars apply
//   const r = await dm.yesNo({ text, statement }); // { statement, answer, probability }
//   await dm.close();
import { loadConfig, type Config } from './config.js';
import { openService } from './service.js';
import type { YesNoInput, YesNoOutput } from './decisions/yes-no.js';
import type { EngineStats } from './engine/engine.js';
import type { Billed } from './decisions/billing.js';

export { ServiceError, CancelledError } from './errors.js';
export type { Config } from './config.js';
export type { YesNoInput, YesNoOutput, YesNoResult } from './decisions/yes-no.js';
export type { EngineStats } from './engine/engine.js';

export interface CallOptions {
  /** Aborting cancels the call's inference and frees its slot. */
  signal?: AbortSignal;
}

export interface DecisionMachine {
  /** The response body the HTTP endpoint would send. Inputs are not re-validated here. */
  yesNo(input: YesNoInput, options?: CallOptions): Promise<YesNoOutput>;
  /** The same, with what the call is billed for. */
  yesNoBilled(input: YesNoInput, options?: CallOptions): Promise<Billed<YesNoOutput>>;
  stats(): EngineStats;
  /** Waits for calls in flight, then frees the model. */
  close(): Promise<void>;
}

export async function open(overrides: Partial<Config> = {}): Promise<DecisionMachine> {
  const service = await openService(loadConfig(process.env, overrides));
  return {
    yesNo: async (input, o) => (await service.yesNo.run(input, o?.signal)).body,
    yesNoBilled: (input, o) => service.yesNo.run(input, o?.signal),
    stats: () => service.engine.stats(),
    close: () => service.engine.close(),
  };
}
