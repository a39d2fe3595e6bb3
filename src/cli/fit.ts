// decision-machine fit FILE: fits a head per decision signature of a labelled JSONL file (see
// src/heads/fit.ts) and stores them where keys and usage are stored (DM_DATABASE_URL), for every
// server on that store to apply. Prints one row per signature: examples, the cross-validated
// accuracy of the head's zero-shot reading and of the head, the route's accuracy on the examples
// it was asked (src/heads/fit.ts), whether the head was stored, and the time.
// Exit status: 0 fitted, 2 usage error, 4 the file is invalid (the line is named; nothing stored).
import { readFile } from 'node:fs/promises';
import { DEFAULTS, loadConfig, type Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { parseArgs } from 'node:util';
import type { Engine } from '../engine/engine.js';
import { Refits } from '../feedback/refits.js';
import { fitHeads, parseExamples, type LabelledLine, type SignatureReport } from '../heads/fit.js';
import { modelSha256 } from '../models/identity.js';
import { openEngine } from '../service.js';
import { openStore, withStore, type Store } from '../store/store.js';
import { table } from './output.js';

export const FIT_USAGE =
  'usage: decision-machine fit FILE.jsonl [--org ORGANIZATION]   (lines of {"cap", "req", "expect"}; --org: heads that decide only that organization\'s requests)';
export const REFIT_USAGE =
  'usage: decision-machine heads refit SIGNATURE [--org ORGANIZATION]   (from the corrections sent to POST .../feedback)';

/** The configuration of both commands: the environment's, without audio models. */
const fitConfig = (): Config => loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });

export async function fitCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { org: { type: 'string' } } });
  } catch (err) {
    process.stderr.write(`decision-machine fit: ${(err as Error).message}\n${FIT_USAGE}\n`);
    return 2;
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0 || parsed.values.org === '') {
    process.stderr.write(`${FIT_USAGE}\n`);
    return 2;
  }
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (err) {
    process.stderr.write(`decision-machine fit: cannot read ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  let examples: LabelledLine[];
  try {
    examples = parseExamples(content);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    process.stderr.write(`decision-machine fit: ${file}: ${err.message}; nothing stored\n`);
    return 4;
  }
  const config = fitConfig();
  // The store opened and closed here rather than by withStore(), whose callback would bring the
  // path back into this file from store.ts.
  const store = await openStore(config.databaseUrl);
  try {
    return await fitAndPrint(config, store, examples, parsed.values.org ?? '');
  } finally {
    await store.close();
  }
}

/**
 * decision-machine heads refit SIGNATURE [--org ORG]: refits one decision from the corrections its
 * organization sent (the deployment's without --org), at once, however few per outcome, as online:
 * on the kept readings (a missing one read now), under the decision's lease, stored only if it
 * wins. Exit 0 refitted (stored or not: the table says), 1 failed or skipped, 2 usage, 4 none.
 */
export async function refitCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { org: { type: 'string' } } });
  } catch (err) {
    process.stderr.write(`decision-machine heads refit: ${(err as Error).message}\n${REFIT_USAGE}\n`);
    return 2;
  }
  const [signature, ...extra] = parsed.positionals;
  if (signature === undefined || extra.length > 0) {
    process.stderr.write(`${REFIT_USAGE}\n`);
    return 2;
  }
  const organization = parsed.values.org ?? '';
  const config = fitConfig();
  return withStore(config.databaseUrl, async (store) => {
    if ((await store.countCorrections(organization, signature)) === 0) {
      process.stderr.write(
        `decision-machine heads refit: no corrections of ${signature} for ${organization || 'the deployment'}\n`,
      );
      return 4;
    }
    // As a server refits it (src/feedback/refits.ts): on the kept readings, under its lease.
    return withModel(config, async (engine) => {
      const refits = new Refits({ engine, store, model: () => modelSha256(config) });
      const { result, report } = await refits.refit(organization, signature, true);
      if (result === 'failed' || result === 'skipped') {
        const why = result === 'failed' ? 'failed' : 'skipped: another process holds its lease, or none can be read';
        process.stderr.write(`decision-machine heads refit: ${signature} ${why}\n`);
        return 1;
      }
      printReports([report!]);
      return 0;
    });
  });
}

/** Loads the model, fits `examples` for `organization` into `store`, prints one row per decision. */
function fitAndPrint(config: Config, store: Store, examples: LabelledLine[], organization: string): Promise<number> {
  return withModel(config, async (engine) => {
    const reports = await fitHeads(engine, examples, {
      store,
      model: await modelSha256(config),
      progress: process.stderr,
      organization,
    });
    printReports(reports);
    return 0;
  });
}

/** Runs `use` with the model of `config` loaded, closing it after. */
async function withModel(config: Config, use: (engine: Engine) => Promise<number>): Promise<number> {
  const engine = await openEngine(config);
  try {
    return await use(engine);
  } finally {
    await engine.close();
  }
}

function printReports(reports: SignatureReport[]): void {
  const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
  table(
    ['head', 'capability', 'decision', 'examples', 'zero-shot', 'fitted', 'route', 'stored', 'seconds'],
    reports.map((r) => [
      r.id,
      r.capability,
      r.description.length > 40 ? `${r.description.slice(0, 39)}…` : r.description,
      String(r.examples),
      pct(r.zeroShot),
      pct(r.fitted),
      r.route === null ? '-' : `${pct(r.route)} of ${r.routeExamples}`,
      r.stored ? 'yes' : `no: ${r.note}`,
      r.seconds.toFixed(1),
    ]),
  );
}
