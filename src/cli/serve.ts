// decision-machine serve: the HTTP service over the configured model, keys and store.
import { loadConfig, ENV, type Config } from '../config.js';
import { createLogger } from '../log.js';
import { serve } from '../http/uws.js';
import { routes, type Service } from '../http/routes.js';
import { Probes } from '../http/probes.js';
import { openService } from '../service.js';
import { keyMaxInflight, openAccess } from '../auth/access.js';
import { redactUrl } from '../store/store.js';
import { Feedback } from '../feedback/feedback.js';
import { modelSha256 } from '../models/identity.js';

/**
 * The listener opens first (GET /health answers at once; GET /ready and the model routes answer
 * 503 not_ready while the model loads), then the model's routes are added. SIGTERM / SIGINT
 * drain: /ready turns 503 and new requests get 503 not_ready, every admitted request is answered
 * and its usage row written (at most DM_DRAIN_TIMEOUT_MS), then the listener and the stores close.
 */
export async function serveCommand(): Promise<number> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  log.info('configuration', { config: printable(config) });
  let service: Service | undefined;
  const learning: { feedback?: Feedback } = {}; // opened with the model, closed by the drain
  const access = await openAccess(config, () => service!.engine.stats(), log);
  const probes = new Probes(() => access.ledger.connected && (service?.heads?.loaded ?? true));
  if (config.auth === 'off') {
    log.warn(
      'KEY CHECKING IS OFF: every /v1 route accepts any key or none, with no rate limit; set DM_AUTH=on to require keys',
    );
  } else {
    log.info('key checking on', {
      store: access.store.kind,
      rateLimitPerMinute: config.rateLimit,
      keyMaxInflight: keyMaxInflight(config),
      shared: config.redisUrl ? 'redis' : 'this process only',
    });
  }
  const server = await serve(probes.routes(), { ...config, log, metrics: access.metrics }).catch(async (err) => {
    await access.close();
    throw err;
  });
  log.info('listening', { url: `http://${config.host}:${server.port}`, phase: 'loading' });

  let stopped: Promise<void> | undefined;
  let signalled = () => {};
  const asked = new Promise<void>((resolve) => (signalled = resolve));
  const stop = (signal: string) => {
    stopped ??= drain(signal);
    signalled();
  };
  const drain = async (signal: string) => {
    log.info('draining', { signal, phase: probes.phase });
    probes.drain();
    const finished = (async () => {
      learning.feedback?.close();
      service?.heads?.close();
      await service?.engine.close();
      await probes.settled();
    })();
    let bound: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => (bound = setTimeout(() => resolve(true), config.drainTimeoutMs))),
    ]);
    clearTimeout(bound);
    if (timedOut) log.error('drain bound reached; exiting with requests unanswered', { ms: config.drainTimeoutMs });
    await server.close();
    await access.close();
    log.info('stopped', { signal });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // A stop while the model loads does not wait for the load: the process exits when drained.
  let loadError: unknown;
  const warn = (message: string) => log.warn('heads', { message });
  const loading = openService(config, access.store, warn, true).then(
    (loaded) => (service = loaded),
    (err: unknown) => {
      loadError = err;
      stop('load failed');
    },
  );
  await Promise.race([loading, asked]);
  if (stopped || !service) {
    await stopped;
    if (loadError) throw loadError;
    return 0;
  }
  service.engine.onSlotWait = access.metrics.slotWait;
  const feedback = (learning.feedback = new Feedback({
    engine: service.engine,
    store: access.store,
    heads: service.heads,
    model: () => modelSha256(config),
    retentionDays: config.feedbackRetentionDays,
    texts: config.feedbackTexts,
    log,
    metrics: access.metrics,
  }));
  server.add(routes(service, access.gate, feedback).map(probes.tracked));
  probes.ready();
  log.info('ready', { model: service.engine.info.description });
  await asked;
  await stopped;
  return 0;
}

// Environment variable names next to their values, so the log says how to change each one.
function printable(config: Config): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ENV).map(([name, key]) => [
      name,
      typeof config[key] === 'string' ? redactUrl(config[key]) : config[key],
    ]),
  );
}
