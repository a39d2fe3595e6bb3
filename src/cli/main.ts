#!/usr/bin/env node
// The `decision-machine` command (package.json "bin"): routes the first argument to its command.
// decision-machine serve              start the HTTP service (fetches the model on first run): serve.ts
// decision-machine models ...         pull | list | verify the models of the manifest: models.ts
// decision-machine keys ...           issue | list | revoke API keys: keys.ts
// decision-machine heads ...          list | show | remove | rollback: heads.ts; refit: fit.ts
// decision-machine usage ...          requests, input tokens and price per organization and key: usage.ts
// decision-machine decide CAP [FILE]  one decision without a server: decide.ts
// decision-machine fit FILE [--org]   fit decision heads on labelled examples: fit.ts
// decision-machine bench [...]        the throughput sweep: decisions/s and latency per setting: bench.ts
// Each command returns its exit status (2: a usage or operator error); an unexpected error is
// printed as `decision-machine: <message>` with exit status 1.
import { benchCommand } from './bench.js';
import { decideCommand } from './decide.js';
import { fitCommand, refitCommand } from './fit.js';
import { headsCommand } from './heads.js';
import { keysCommand } from './keys.js';
import { modelsCommand } from './models.js';
import { serveCommand } from './serve.js';
import { usageCommand } from './usage.js';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'models') return modelsCommand(rest);
  if (command === 'keys') return keysCommand(rest);
  if (command === 'heads' && rest[0] === 'refit') return refitCommand(rest.slice(1));
  if (command === 'heads') return headsCommand(rest);
  if (command === 'usage') return usageCommand(rest);
  if (command === 'decide') return decideCommand(rest);
  if (command === 'fit') return fitCommand(rest);
  if (command === 'bench') return benchCommand(rest);
  if (command === 'serve' || command === undefined) return serveCommand();
  process.stderr.write(
    'usage: decision-machine [serve] | models pull|list|verify | keys issue|list|revoke | heads list|show|remove|rollback|refit | usage [...] | decide CAPABILITY [FILE] | fit FILE | bench [--help]\n',
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`decision-machine: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
