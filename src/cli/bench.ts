// decision-machine bench [options]: the throughput sweep an operator runs on their own machine
// (src/bench/). The table (or --output's format) goes to stdout, one progress line per row to
// stderr, the --svg chart to its file. Exit status: 0 measured, 2 a usage error (the flag is
// named; nothing is loaded), 1 the target could not be opened or reached.
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULTS, loadConfig } from '../config.js';
import { BENCH_USAGE, parsePlan, UsageError } from '../bench/plan.js';
import { recommend } from '../bench/recommend.js';
import { format } from '../bench/report.js';
import { kneeChart } from '../bench/svg.js';
import { runSweep, type Sweep } from '../bench/sweep.js';

export async function benchCommand(args: string[]): Promise<number> {
  // As the library: no audio models; every other setting from the environment.
  const config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
  let plan;
  try {
    plan = parsePlan(args, config);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`decision-machine bench: ${err.message}\n${BENCH_USAGE}\n`);
    return 2;
  }
  if (plan === 'help') {
    process.stdout.write(`${BENCH_USAGE}\n`);
    return 0;
  }
  const sweep = plan.from
    ? readSweep(plan.from)
    : await runSweep(plan, config, (line) => process.stderr.write(`${line}\n`));
  if (sweep === undefined) return 2;
  process.stdout.write(format(sweep, plan.output));
  if (plan.svg) writeFileSync(plan.svg, kneeChart(sweep.rows));
  // After the table on stdout; on stderr when stdout carries a machine-readable format.
  if (plan.p99Ms !== undefined)
    (plan.output === 'md' ? process.stdout : process.stderr).write(`\n${recommend(sweep.rows, plan.p99Ms)}`);
  return 0;
}

/**
 * The sweep of a --from file: one sweep (`--output json`), or a result file of dated runs
 * (`{"runs": [sweep, ...]}`, as bench/results/throughput.json), their rows together under the
 * last run's heading; undefined (the reason on stderr) when it holds none.
 */
function readSweep(file: string): Sweep | undefined {
  try {
    const read = JSON.parse(readFileSync(file, 'utf8')) as Sweep | { runs: Sweep[] };
    const runs = 'runs' in read && Array.isArray(read.runs) ? read.runs : [read as Sweep];
    if (runs.length > 0 && runs.every((run) => Array.isArray(run.rows)))
      return { ...runs.at(-1)!, rows: runs.flatMap((run) => run.rows) };
    process.stderr.write(`decision-machine bench: --from: ${file} holds no sweep (no "rows")\n`);
  } catch (err) {
    process.stderr.write(`decision-machine bench: --from: ${(err as Error).message}\n`);
  }
  return undefined;
}
