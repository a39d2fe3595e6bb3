// decision-machine keys: the API keys of the configured store (DM_DATABASE_URL; DM_REDIS_URL for the fan-out):
//   keys issue --org ORG [--mode test|prod] [--name TEXT]   prints the full key once
//   keys list [--json]
//   keys revoke KEY_ID                                       every replica stops accepting it within the verdict cache
//     time (at once with Redis)
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { connectRedis, publishRevocation } from '../store/redis.js';
import { withStore } from '../store/store.js';
import { issueKey, ORGANIZATION } from '../auth/keys.js';
import { fail, table } from './output.js';

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
