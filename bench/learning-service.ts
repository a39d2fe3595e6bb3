// The service as the feedback benches run it: default model and settings, keys off, decisions
// kept for correction, corrections read and heads refitted online, on a fresh SQLite file, served
// over HTTP on a free loopback port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULTS, loadConfig } from '../src/config.js';
import { openAccess } from '../src/auth/access.js';
import { Feedback } from '../src/feedback/feedback.js';
import { routes } from '../src/http/routes.js';
import { serve } from '../src/http/uws.js';
import { createLogger } from '../src/log.js';
import { modelSha256 } from '../src/models/identity.js';
import { openService } from '../src/service.js';

/** One HTTP call's reply: status, JSON body, the decision id and head it names, its latency. */
export interface Reply {
  status: number;
  json: Record<string, unknown>;
  id: string | null;
  head: string | null;
  ms: number;
}

export async function startLearningService() {
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-learning-'));
  const config = loadConfig(
    process.env,
    {},
    { ...DEFAULTS, audio: 'off', databaseUrl: join(dir, 'service.db'), journalDir: join(dir, 'journal') },
  );
  const log = createLogger('silent');
  const access = await openAccess(config, () => service.engine.stats(), log);
  const service = await openService(config, access.store);
  const model = () => modelSha256(config);
  const feedback = new Feedback({
    engine: service.engine,
    store: access.store,
    heads: service.heads,
    model,
    retentionDays: 7,
    log: createLogger('info'),
  });
  const server = await serve(routes(service, access.gate, feedback), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1 << 20,
    log,
  });
  const url = `http://127.0.0.1:${server.port}/v1`;
  const post = async (path: string, body: unknown): Promise<Reply> => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, unknown>;
    const [id, head] = [res.headers.get('x-decision-id'), res.headers.get('x-decision-head')];
    return { status: res.status, json, id, head, ms: performance.now() - started };
  };
  const close = async () => {
    feedback.close();
    server.close();
    await service.engine.close();
    await access.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, post, service, feedback, store: access.store, config, model, close };
}
