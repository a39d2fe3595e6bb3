// The real HTTP stack with the gate (keys, limits, ledger, metrics) wired from a configuration,
// over the fake binding: what `decision-machine serve` runs, minus the model.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { Probes } from '../../src/http/probes.js';
import { createLogger, type Logger } from '../../src/log.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openAccess, type Access } from '../../src/auth/access.js';
import { Feedback } from '../../src/feedback/feedback.js';
import { fakeBinding, type FakeBehaviour, type FakeBinding } from './fake-binding.js';
import { SMALL } from './server.js';

export interface GatedServer {
  url: string;
  engine: Engine;
  binding: FakeBinding;
  access: Access;
  feedback: Feedback;
  close(): Promise<void>;
}

export async function startGatedServer(
  overrides: Partial<Config>,
  behaviour: Partial<FakeBehaviour> = {},
  engine: Partial<typeof SMALL> = {},
  log: Logger = createLogger('silent'),
): Promise<GatedServer> {
  // A journal of its own unless one is named, so that no test adopts another's rows.
  const journalDir = overrides.journalDir ?? mkdtempSync(join(tmpdir(), 'dm-journal-'));
  const config = loadConfig({}, { maxBodyBytes: 1 << 20, ...overrides, journalDir });
  const binding = fakeBinding(behaviour);
  const e = await Engine.open({ ...SMALL, queue: 2, ...engine, modelPath: 'fake' }, binding);
  const access = await openAccess(config, () => e.stats(), log);
  e.onSlotWait = (seconds) => access.metrics.slotWait(seconds);
  // As `decision-machine serve` has them: the probes, then the model's routes, ready.
  const probes = new Probes(() => access.ledger.connected);
  const feedback = new Feedback({
    engine: e,
    store: access.store,
    model: async () => 'f'.repeat(64),
    retentionDays: config.feedbackRetentionDays,
    texts: config.feedbackTexts,
  });
  const server = await serve([...probes.routes(), ...routes(serviceOf(e), access.gate, feedback).map(probes.tracked)], {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: config.maxBodyBytes,
    log,
    metrics: access.metrics,
  });
  probes.ready();
  return {
    url: `http://127.0.0.1:${server.port}`,
    engine: e,
    binding,
    access,
    feedback,
    close: async () => {
      feedback.close();
      server.close();
      await e.close();
      await access.close();
      if (!overrides.journalDir) rmSync(journalDir, { recursive: true, force: true });
    },
  };
}
