// A gated server in its own process (for kill -9 tests): configuration from the environment,
// prints its URL on stdout, runs until killed.
import { loadConfig } from '../../src/config.js';
import { startGatedServer } from './gated-server.js';

const server = await startGatedServer(loadConfig(), { delayMs: 20 }, { queue: 64 });
process.stdout.write(`${server.url}\n`);
