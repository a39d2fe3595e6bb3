// A real engine with the test whisper model behind the audio route on a loopback port.
import { request } from 'node:http';
import { Engine } from '../../src/engine/engine.js';
import { Transcription } from '../../src/audio/transcription.js';
import { loadConfig } from '../../src/config.js';
import { audioRoutes } from '../../src/http/audio.js';
import { serve } from '../../src/http/uws.js';
import { loadAudio } from '../../src/service.js';
import { testModelPath } from '../helpers/model.js';

export interface AudioServer {
  url: string;
  engine: Engine;
  transcription: Transcription;
  close(): Promise<void>;
}

const silent = { info() {}, error() {}, warn() {} } as never;

export async function audioServer(env: NodeJS.ProcessEnv = {}, slots = 1): Promise<AudioServer> {
  const config = loadConfig({ ...process.env, ...env });
  const engine = await Engine.open({
    modelPath: await testModelPath(),
    slots,
    threads: 2,
    queue: 1,
    contextSize: 512,
    batchSize: 64,
    promptCacheMiB: 0,
  });
  await loadAudio(engine, config);
  const transcription = new Transcription(engine, config);
  const server = await serve(audioRoutes(transcription), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1 << 20,
    log: silent,
  });
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

/**
 * POSTs raw bytes. node:http rather than fetch: fetch gives up on a reply that takes more than
 * 300 s to start, which a transcription of damaged audio on a busy two-core machine can. Each
 * upload opens its own connection: the tests synthesise speech synchronously, which stalls the
 * in-process server's timers too, so a pooled connection can be closed by its idle timer just as
 * the next upload is written on it (ECONNRESET).
 */
export function post(
  url: string,
  body: Buffer,
  type = 'application/octet-stream',
  query = '',
): Promise<{ status: number; json: any; headers: Headers }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url + query,
      { method: 'POST', agent: false, headers: { 'content-type': type, 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, json, headers });
        });
      },
    );
    // A refused upload is answered before it is read whole and the connection closed: the write
    // may fail after (or just before) the reply arrives, which is what counts.
    req.on('error', (err) => setTimeout(() => reject(err), 2000).unref());
    req.end(body);
  });
}
