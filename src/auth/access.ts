// Opens what the gate needs from the configuration: the store (SQLite file or PostgreSQL), the
// usage ledger over it and its journal, Redis when configured (shared rate counters, revocation
// fan-out), the key checker and the metrics. Nothing here waits for the database: a service
// starts while it is away (GET /ready says when it has answered).
import type { Config } from '../config.js';
import type { EngineStats } from '../engine/engine.js';
import type { Logger } from '../log.js';
import { Metrics } from '../metrics.js';
import { connectRedis, subscribeRevocations } from '../store/redis.js';
import { openStore, type Store } from '../store/store.js';
import { Journal } from '../store/journal.js';
import { Ledger } from '../store/ledger.js';
import { KeyChecker } from './checker.js';
import { Gate } from './gate.js';
import { MemoryLimiter, RedisLimiter, TokenMeter, type Limiter } from './limiter.js';
import { InflightCap } from './inflight.js';

export interface Access {
  gate: Gate;
  metrics: Metrics;
  store: Store;
  ledger: Ledger;
  close(): Promise<void>;
}

/** DM_KEY_MAX_INFLIGHT, 0 standing for half the slots (at least one). */
export function keyMaxInflight(config: Pick<Config, 'keyMaxInflight' | 'slots'>): number {
  return config.keyMaxInflight || Math.max(1, Math.floor(config.slots / 2));
}

export async function openAccess(config: Config, stats: () => EngineStats, log: Logger): Promise<Access> {
  const store = await openStore(config.databaseUrl);
  const redisError = (err: Error) => log.error('redis', { error: err.message });
  const redis = config.redisUrl
    ? await connectRedis(config.redisUrl, { failFast: true, onError: redisError })
    : undefined;
  const metrics = new Metrics(stats);
  const journal = Journal.open(config.journalDir, config.databaseUrl, config.journalMaxMiB * 1024 * 1024);
  const ledger = new Ledger(store, journal, log, metrics);
  let keys: KeyChecker | undefined;
  let limiter: Limiter | undefined;
  let tokens: TokenMeter | undefined;
  let inflight: InflightCap | undefined;
  let subscriber: { disconnect(): void } | undefined;
  if (config.auth === 'on') {
    const checker = new KeyChecker(store, config.keyCacheSeconds * 1000);
    keys = checker;
    if (config.redisUrl)
      subscriber = await subscribeRevocations(config.redisUrl, (id) => checker.forget(id), redisError);
    const outage = (err: Error) =>
      log.error('rate limits counted per replica until Redis answers again', { error: err.message });
    if (config.rateLimit > 0)
      limiter = redis ? new RedisLimiter(redis, config.rateLimit, outage) : new MemoryLimiter(config.rateLimit);
    if (config.tokenLimit > 0) tokens = new TokenMeter(config.tokenLimit);
    inflight = new InflightCap(keyMaxInflight(config), config.overloadDelayMs);
  }
  const keepDecisions = config.feedbackRetentionDays > 0;
  const gate = new Gate({ keys, limiter, tokens, inflight, ledger, metrics, log, keepDecisions });
  return {
    gate,
    metrics,
    store,
    ledger,
    close: async () => {
      subscriber?.disconnect();
      redis?.disconnect();
      await ledger.close();
      await store.close();
    },
  };
}
