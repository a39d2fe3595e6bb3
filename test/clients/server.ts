// The real model behind the real gate (keys, limits, ledger): what the Python clients are pointed at.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openAccess, type Access } from '../../src/auth/access.js';
import { issueKey } from '../../src/auth/keys.js';
import { testModelPath } from '../helpers/model.js';
import { SMALL } from '../helpers/server.js';

export interface ModelServer {
  url: string;
  access: Access;
  /** A fresh test key of organization `org`. */
  key(org?: string): Promise<string>;
  close(): Promise<void>;
}

// 255 described options (the System One maximum) take about 4,500 tokens of context.
export async function startModelServer(overrides: Partial<Config> = {}): Promise<ModelServer> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-clients-'));
  const log = createLogger('silent');
  const config = loadConfig(
    {},
    { auth: 'on', databaseUrl: join(dir, 'service.db'), journalDir: join(dir, 'journal'), ...overrides },
  );
  const engine = await Engine.open({ ...SMALL, queue: 8, contextSize: 6144, modelPath: await testModelPath() });
  const access = await openAccess(config, () => engine.stats(), log);
  const server = await serve(routes(serviceOf(engine), access.gate), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: config.maxBodyBytes,
    log,
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    access,
    key: async (org = 'clients') => (await issueKey(access.store, 'test', org)).key,
    close: async () => {
      server.close();
      await engine.close();
      await access.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
