// Opens everything a running service needs, in data-path order: model files -> engine -> decisions.
import { readFileSync } from 'node:fs';
import type { Config } from './config.js';
import { Engine } from './engine/engine.js';
import { DecisionSet, openCapabilities } from './decisions/capabilities.js';
import { Chat } from './decisions/chat.js';
import { SystemOne } from './decisions/systemone.js';
import { resolveModel, storeOptions } from './models/store.js';
import { DEFAULT_SPEAKER_MODEL, findModel } from './models/manifest.js';
import { Transcription } from './audio/transcription.js';
import type { Service } from './http/routes.js';
import type { Store } from './store/store.js';
import { Heads } from './heads/heads.js';
import { StoreHeadDecider } from './heads/apply.js';
import { modelSha256 } from './models/identity.js';
import { OptionReadout } from './decisions/option-readout.js';
import { RATE_READING_VERSION, RATE_READOUT_FILE } from './decisions/rate.js';

export const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/**
 * Resolves the models (fetching them into the cache if needed), loads them, prepares the
 * decisions; the audio models only with `config.audio` on. With a store, the decisions apply the
 * heads it holds for this model (src/heads), kept current as the store changes; the shipped trained
 * readout applies when it was fitted on this model. A store that does not answer fails the open,
 * unless `storeMayBeAway` (the server, whose readiness waits for `heads.loaded`).
 */
export async function openService(
  config: Config,
  headStore?: Store,
  warn: (m: string) => void = () => {},
  storeMayBeAway = false,
): Promise<Service> {
  const engine = await openEngine(config);
  // Hashed at most once (a model given by path is read whole), and only when something asks.
  let sha256: Promise<string> | undefined;
  const model = () => (sha256 ??= modelSha256(config));
  const heads = headStore && (await Heads.open(headStore, await model(), engine.hiddenSize, warn, storeMayBeAway));
  const readout = await OptionReadout.forModel(model);
  const rateReadout = await OptionReadout.forModel(model, RATE_READOUT_FILE, RATE_READING_VERSION);
  if (config.audio === 'off') return serviceOf(engine, heads, readout, rateReadout);
  await loadAudio(engine, config);
  return { ...serviceOf(engine, heads, readout, rateReadout), transcription: new Transcription(engine, config) };
}

/** The configured decision model and sentence encoder, fetched into the cache if needed, loaded. */
export async function openEngine(config: Config): Promise<Engine> {
  const store = storeOptions(config);
  const [modelPath, encoderPath] = await Promise.all([
    resolveModel(config.model, { ...store, path: config.modelPath }),
    config.encoder === 'none' ? undefined : resolveModel(config.encoder, store),
  ]);
  return Engine.open({ ...config, modelPath, encoderPath });
}

/** Loads whisper, the VAD model and the speaker encoder the configuration names. */
export async function loadAudio(engine: Engine, config: Config): Promise<void> {
  const store = storeOptions(config);
  // The speaker encoder too is resolved at start-up, so the first diarize=true request does not
  // fetch or convert it.
  const [whisperPath, vadPath, speakerPath] = await Promise.all([
    resolveModel(config.whisperModel, { ...store, path: config.whisperModelPath }),
    config.vadModel === 'none' ? undefined : resolveModel(config.vadModel, store),
    resolveModel(DEFAULT_SPEAKER_MODEL, { ...store, path: config.speakerModelPath }),
  ]);
  await engine.loadWhisper(whisperPath, findModel(config.whisperModel)?.alignmentHeads ?? '', vadPath);
  await engine.loadSpeakerEncoder(speakerPath);
}

/**
 * Every capability of the table (src/decisions/capabilities.ts) and chat over one engine; choices
 * among options read by `readout` and rate's levels by `rateReadout` when given (the shipped ones,
 * for the model they were fitted on).
 */
export function serviceOf(
  engine: Engine,
  heads?: Heads,
  readout?: OptionReadout,
  rateReadout?: OptionReadout,
): Service {
  const opened = new DecisionSet(engine, heads && new StoreHeadDecider(engine, heads), readout, rateReadout);
  const { decisions, bound } = openCapabilities(opened);
  return {
    ...decisions,
    name: PACKAGE.name,
    version: PACKAGE.version,
    engine,
    capabilities: bound,
    chat: new Chat(engine, opened.classify, opened.extract),
    systemOne: new SystemOne(engine, opened, opened.heads),
    heads,
  };
}
