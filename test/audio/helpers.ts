// A real engine with the test whisper model behind the audio route on a loopback port.
import { Engine } from '../../src/engine/engine.js';
import { Transcription } from '../../src/audio/transcription.js';
import { audioSettings } from '../../src/audio/limits.js';
import { audioRoutes } from '../../src/http/audio.js';
import { serve } from '../../src/http/uws.js';
import { findWhisperModel, resolveWhisperModel } from '../../src/models/whisper-models.js';
import { testModelPath } from '../helpers/model.js';

export interface AudioServer {
  url: string;
  engine: Engine;
  transcription: Transcription;
  close(): Promise<void>;
}

const silent = { info() {}, error() {}, warn() {} } as never;

export async function audioServer(env: NodeJS.ProcessEnv = {}, slots = 1): Promise<AudioServer> {
  const settings = audioSettings({ ...process.env, ...env });
  const whisper = await resolveWhisperModel(settings.model, { path: settings.modelPath });
  const engine = await Engine.open({ modelPath: await testModelPath(), slots, threads: 2, queue: 1, contextSize: 512, batchSize: 64 });
  await engine.loadWhisper(whisper, findWhisperModel(settings.model)?.alignmentHeads ?? '');
  const transcription = new Transcription(engine, settings);
  const server = await serve(audioRoutes(transcription), { host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20, log: silent });
  return {
    url: `http://127.0.0.1:${server.port}/v1/audio/transcribe`,
    engine,
    transcription,
    close: async () => {
      server.close();
      await engine.close();
    },
  };
}

export async function post(url: string, body: Buffer, type = 'application/octet-stream', query = ''): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url + query, { method: 'POST', body, headers: { 'content-type': type } });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
