// decision-machine decide CAPABILITY [FILE]: one decision without a server. The request body (JSON)
// comes from FILE, or stdin when FILE is absent or "-"; the library's engine (openService, what
// src/index.ts open() runs) is loaded and the capability's own route handler answers it in
// process, so stdout carries exactly the JSON the HTTP route returns: the result, or the error
// envelope. The heads fitted in the configured store (DM_DATABASE_URL) apply as they do in the
// server and the library; a decision made by one names it on stderr (`x-decision-head: <id>`, the
// server's header). Exit status by the HTTP status class: 0 for 200, 4 for a 4xx, 5 for a 5xx, 2
// for a usage error (nothing decided).
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { CAPABILITY_PREFIX } from '../api/capability.js';
import { CAPABILITIES } from '../decisions/capabilities.js';
import { DEFAULTS, loadConfig, type Config } from '../config.js';
import { ERRORS, ServiceError } from '../errors.js';
import { routes } from '../http/routes.js';
import type { ApiReply } from '../http/types.js';
import { openService } from '../service.js';
import { withStore } from '../store/store.js';

const NAMES: readonly string[] = CAPABILITIES.map((c) => c.name);

export const DECIDE_USAGE = `usage: decision-machine decide CAPABILITY [FILE|-]   (${NAMES.join(', ')})`;

export async function decideCommand(args: string[], stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const [capability, file, ...extra] = args;
  if (capability === undefined || !NAMES.includes(capability) || extra.length > 0) {
    process.stderr.write(
      `${capability === undefined || NAMES.includes(capability) ? '' : `unknown capability ${JSON.stringify(capability)}\n`}${DECIDE_USAGE}\n`,
    );
    return 2;
  }
  let body: Buffer;
  try {
    body = file === undefined || file === '-' ? await readAll(stdin) : await readFile(file);
  } catch (err) {
    process.stderr.write(`decision-machine decide: cannot read ${file ?? 'stdin'}: ${(err as Error).message}\n`);
    return 2;
  }
  // As the library: no audio models; every other setting from the environment.
  const config: Config = loadConfig(process.env, {}, { ...DEFAULTS, audio: 'off' });
  if (body.length > config.maxBodyBytes) {
    const tooLarge = ERRORS.tooLarge('body', config.maxBodyBytes);
    process.stdout.write(`${JSON.stringify(tooLarge.toJSON())}\n`);
    return 4;
  }
  const warn = (message: string) => process.stderr.write(`decision-machine decide: ${message}\n`);
  return withStore(config.databaseUrl, async (store) => {
    const service = await openService(config, store, warn);
    try {
      const path = `${CAPABILITY_PREFIX}/${capability}`;
      const route = routes(service).find((r) => r.method === 'post' && r.path === path)!;
      const reply = await route
        .handler({
          method: 'post',
          path,
          query: new URLSearchParams(),
          headers: { 'content-type': 'application/json' },
          body,
          id: randomUUID(),
          signal: new AbortController().signal,
          log: {},
        })
        .catch(errorReply);
      process.stdout.write(`${JSON.stringify(reply.body)}\n`);
      const head = reply.headers?.['x-decision-head'];
      if (head) process.stderr.write(`x-decision-head: ${head}\n`);
      return reply.status < 300 ? 0 : reply.status < 500 ? 4 : 5;
    } finally {
      service.heads?.close();
      await service.engine.close();
    }
  });
}

/** The reply the HTTP server sends for an error: the envelope, 500 for anything unexpected. */
function errorReply(err: unknown): ApiReply {
  if (err instanceof ServiceError) return { status: err.status, body: err.toJSON() };
  process.stderr.write(`decision-machine decide: ${String((err as Error)?.stack ?? err)}\n`);
  const internal = ERRORS.internalError();
  return { status: 500, body: internal.toJSON() };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
