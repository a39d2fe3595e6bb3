// The service as the real-model feedback tests run it: the real model on one small request slot,
// the gate and store of `config` (decisions kept for correction), heads refitted online from
// corrections, served on a free loopback port. Closed with the test.
import type { Test } from 'tap';
import { openAccess } from '../../src/auth/access.js';
import type { Config } from '../../src/config.js';
import { Engine } from '../../src/engine/engine.js';
import { Feedback } from '../../src/feedback/feedback.js';
import { Heads } from '../../src/heads/heads.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';
import { serviceOf } from '../../src/service.js';
import { testModelPath } from './model.js';

/** `model`: the SHA-256 the heads are bound to; `threads`: per slot. */
export async function startLearningServer(t: Test, config: Config, model: string, threads: number) {
  const log = createLogger('silent');
  const engine = await Engine.open({
    modelPath: await testModelPath(),
    slots: 1,
    threads,
    queue: 4,
    contextSize: 2048,
    batchSize: 256,
    promptCacheMiB: 64,
  });
  const access = await openAccess(config, () => engine.stats(), log);
  const heads = await Heads.open(access.store, model, engine.hiddenSize, () => {});
  const feedback = new Feedback({
    engine,
    store: access.store,
    heads,
    model: async () => model,
    retentionDays: 7,
    metrics: access.metrics,
  });
  const server = await serve(routes(serviceOf(engine, heads), access.gate, feedback), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 64 * 1024,
    log,
  });
  t.teardown(async () => {
    server.close();
    feedback.close();
    await feedback.refits.settled();
    heads.close();
    await engine.close();
    await access.close();
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, access, feedback };
}
