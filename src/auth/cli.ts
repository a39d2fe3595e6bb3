// Operator commands over the configured store (DM_DATABASE_URL; DM_REDIS_URL for the fan-out):
//   keys issue --org ORG [--mode test|prod] [--name TEXT]   prints the full key once
//   keys list [--json]
//   keys revoke KEY_ID                                       every replica stops accepting it within the verdict cache
//     time (at once with Redis)
//   usage [--since DATE] [--until DATE] [--json]             requests, input tokens and price per organization and key
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { connectRedis, publishRevocation } from '../store/redis.js';
import { openStore, type Store, type UsageTotal } from '../store/store.js';
import { issueKey, ORGANIZATION } from './keys.js';

/** Dollars per input token (0.04 per million); output tokens are free. Test keys are metered, not charged. */
const USD_PER_INPUT_TOKEN = 0.04 / 1_000_000;

export async function keysCommand(args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      mode: { type: 'string', default: 'test' },
      name: { type: 'string', default: '' },
      json: { type: 'boolean', default: false },
    },
  });
  const config = loadConfig();
  return withStore(config.databaseUrl, async (store) => {
    if (verb === 'issue') {
      if (values.mode !== 'test' && values.mode !== 'prod') return fail('--mode must be test or prod');
      if (!values.org) return fail('--org is required (1 to 32 characters a-z and 0-9)');
      if (!ORGANIZATION.test(values.org)) return fail('--org: 1 to 32 characters a-z and 0-9');
      const { key, record } = await issueKey(store, values.mode, values.org, values.name);
      process.stdout.write(`${key}\n`);
      process.stderr.write(
        `issued ${record.id} (${record.mode}, organization ${record.organization}). The key is shown only this once: only its hash is stored.\n`,
      );
      return 0;
    }
    if (verb === 'list') {
      const keys = (await store.listKeys()).map(({ hash: _hash, ...k }) => k);
      if (values.json) process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
      else
        table(
          ['id', 'mode', 'organization', 'name', 'key', 'created', 'revoked'],
          keys.map((k) => [
            k.id,
            k.mode,
            k.organization,
            k.name,
            `${k.mode}_sk-${k.organization}-...${k.hint}`,
            k.createdAt,
            k.revokedAt ?? '',
          ]),
        );
      return 0;
    }
    if (verb === 'revoke') {
      const id = positionals[0];
      if (!id) return fail('usage: decision-machine keys revoke KEY_ID');
      if (!(await store.revokeKey(id, new Date().toISOString()))) return fail(`no active key ${id}`);
      if (config.redisUrl) {
        const redis = await connectRedis(config.redisUrl);
        await publishRevocation(redis, id).finally(() => redis.disconnect());
        process.stderr.write(`revoked ${id}; replicas told through Redis\n`);
      } else {
        process.stderr.write(
          `revoked ${id}; replicas stop accepting it within ${config.keyCacheSeconds} s (their verdict cache)\n`,
        );
      }
      return 0;
    }
    return fail(
      'usage: decision-machine keys issue --org ORG [--mode test|prod] [--name TEXT] | list [--json] | revoke KEY_ID',
    );
  });
}

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

/** Opens the configured store for one command and closes it after. */
export async function withStore(url: string, use: (store: Store) => Promise<number>): Promise<number> {
  const store = await openStore(url);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** An operator error on stderr; exit code 2. */
export function fail(message: string): number {
  process.stderr.write(`decision-machine: ${message}\n`);
  return 2;
}

/** Left-aligned columns with a header row, on stdout. */
export function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [head, ...rows])
    process.stdout.write(
      `${row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}
