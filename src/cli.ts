#!/usr/bin/env node
// decision-machine serve            start the HTTP service (fetches the model on first run)
// decision-machine models ...       pull | list | verify (see src/models/cli.ts)
// decision-machine keys ...         issue | list | revoke API keys (see src/auth/cli.ts)
// decision-machine usage ...        requests, input tokens and price per organization and key
// decision-machine decide CAP [FILE] one decision without a server (see src/cli/decide.ts)
import { loadConfig, ENV, type Config } from './config.js';
import { createLogger } from './log.js';
import { modelsCommand } from './models/cli.js';
import { serve } from './http/uws.js';
import { routes } from './http/routes.js';
import { openService } from './service.js';
import { openAccess } from './auth/access.js';
import { keysCommand, usageCommand } from './auth/cli.js';
import { redactUrl } from './store/store.js';
import { decideCommand } from './cli/decide.js';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'models') return modelsCommand(rest);
  if (command === 'keys') return keysCommand(rest);
  if (command === 'usage') return usageCommand(rest);
  if (command === 'decide') return decideCommand(rest);
  if (command === 'serve' || command === undefined) return runServer();
  process.stderr.write(
    'usage: decision-machine [serve] | models pull|list|verify | keys issue|list|revoke | usage [...] | decide CAPABILITY [FILE]\n',
  );
  return 2;
}

async function runServer(): Promise<number> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  log.info('configuration', { config: printable(config) });
  const service = await openService(config);
  const access = await openAccess(config, () => service.engine.stats(), log);
  service.engine.onSlotWait = (seconds) => access.metrics.slotWait(seconds);
  if (config.auth === 'off') {
    log.warn(
      'KEY CHECKING IS OFF: every /v1 route accepts any key or none, with no rate limit; set DM_AUTH=on to require keys',
    );
  } else {
    log.info('key checking on', {
      store: access.store.kind,
      rateLimitPerMinute: config.rateLimit,
      shared: config.redisUrl ? 'redis' : 'this process only',
    });
  }
  const server = await serve(routes(service, access.gate), { ...config, log, metrics: access.metrics });
  log.info('listening', { url: `http://${config.host}:${server.port}`, model: service.engine.info.description });

  // Graceful shutdown: stop accepting, let admitted requests finish, free the model.
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info('shutting down', { signal });
      server.close();
      void service.engine
        .close()
        .then(() => access.close())
        .then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`decision-machine: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
