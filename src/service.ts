// Opens everything a running service needs, in data-path order: model files -> engine -> decisions.
import { readFileSync } from 'node:fs';
import type { Config } from './config.js';
import { Engine } from './engine/engine.js';
import { YesNo } from './decisions/yes-no.js';
import { Classify } from './decisions/classify.js';
import { ClassifyTree } from './decisions/classify-tree.js';
import { Rate } from './decisions/rate.js';
import { Answer } from './decisions/answer.js';
import { Entities } from './decisions/entities.js';
import { Verify } from './decisions/verify.js';
import { Extract } from './decisions/extract.js';
import { Chat } from './decisions/chat.js';
import { resolveModel } from './models/store.js';
import { speakerEncoder } from './audio/speaker-model.js';
import { findWhisperModel, resolveWhisperModel } from './models/whisper-models.js';
import { audioSettings } from './audio/limits.js';
import { Transcription } from './audio/transcription.js';
import type { Service } from './http/routes.js';

export const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/** Resolves the model (fetching it into the cache if needed), loads it, prepares the decisions. */
export async function openService(config: Config): Promise<Service> {
  const [modelPath, encoderPath] = await Promise.all([
    resolveModel(config.model, { path: config.modelPath }),
    config.encoder === 'none' ? undefined : resolveModel(config.encoder),
  ]);
  const engine = await Engine.open({ ...config, modelPath, encoderPath });
  const audio = audioSettings();
  const [whisperPath, vadPath] = await Promise.all([
    resolveWhisperModel(audio.model, { path: audio.modelPath }),
    audio.vad === 'none' ? undefined : resolveModel(audio.vad),
  ]);
  await engine.loadWhisper(whisperPath, findWhisperModel(audio.model)?.alignmentHeads ?? '', vadPath);
  await speakerEncoder(); // at start-up, so the first diarize=true request does not fetch or convert it
  return { ...decisions(engine), transcription: new Transcription(engine, audio) };
}

/** Every capability over one engine. */
export function decisions(engine: Engine): Service {
  const classify = new Classify(engine);
  const extract = new Extract(engine);
  return {
    name: PACKAGE.name,
    version: PACKAGE.version,
    engine,
    yesNo: new YesNo(engine),
    classify,
    classifyTree: new ClassifyTree(engine, classify),
    rate: new Rate(engine),
    answer: new Answer(engine),
    entities: new Entities(engine),
    verify: new Verify(engine),
    extract,
    chat: new Chat(engine, classify, extract),
  };
}
