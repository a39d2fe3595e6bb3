// Starts the real HTTP stack on a free loopback port over a given engine.
import { Engine, type EngineOptions } from '../../src/engine/engine.js';
import type { NativeBinding } from '../../src/binding.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';

export interface TestServer {
  url: string;
  engine: Engine;
  close(): Promise<void>;
}

export const SMALL: Omit<EngineOptions, 'modelPath'> = {
  slots: 2,
  threads: 2,
  queue: 0,
  contextSize: 4096,
  batchSize: 512,
  promptCacheMiB: 64,
};

export async function startServer(
  binding: NativeBinding | undefined,
  options: Partial<EngineOptions> & { modelPath: string },
  maxBodyBytes = 64 * 1024,
): Promise<TestServer> {
  const engine = await Engine.open({ ...SMALL, ...options }, binding);
  const service = serviceOf(engine);
  const server = await serve(routes(service), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes,
    log: createLogger('silent'),
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    engine,
    close: async () => {
      server.close();
      await engine.close();
    },
  };
}

export async function post(
  url: string,
  body: unknown,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    ...init,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
