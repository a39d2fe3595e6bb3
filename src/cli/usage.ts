// decision-machine usage [--since DATE] [--until DATE] [--json]: requests, input tokens and price per
// organization and key, from the usage ledger of the configured store (DM_DATABASE_URL).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { withStore, type UsageTotal } from '../store/store.js';
import { fail, table } from './output.js';

/** Dollars per input token (0.04 per million); output tokens are free. Test keys are metered, not charged. */
const USD_PER_INPUT_TOKEN = 0.04 / 1_000_000;

export async function usageCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { since: { type: 'string' }, until: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  for (const bound of [values.since, values.until])
    if (bound !== undefined && Number.isNaN(Date.parse(bound))) return fail(`not a date: ${bound}`);
  return withStore(loadConfig().databaseUrl, async (store) => {
    const rows = (await store.usage({ since: values.since, until: values.until })).map((r) => ({
      ...r,
      usd: price(r),
    }));
    if (values.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    table(
      ['organization', 'key', 'mode', 'requests', 'input tokens', 'USD'],
      rows.map((r) => [r.organization, r.keyId, r.mode, String(r.requests), String(r.inputTokens), r.usd.toFixed(6)]),
    );
    const total = rows.reduce((n, r) => n + r.usd, 0);
    process.stdout.write(`total ${total.toFixed(6)} USD at 0.04 USD per million input tokens (prod keys only)\n`);
    return 0;
  });
}

function price(row: UsageTotal): number {
  return row.mode === 'prod' ? row.inputTokens * USD_PER_INPUT_TOKEN : 0;
}
