// The hosted service's own SDK (PyPI cloudraker-milliseconds 0.2.2), pointed at this server and
// run through its README's examples (all but images, which get a clear 400): every example holds.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { pythonClients, run } from '../helpers/python-clients.js';
import { startModelServer } from './server.js';

// The real model answers every request: longer than the suite's 600 s default on a busy machine.
t.setTimeout(1_200_000);

const { python } = pythonClients();
const server = await startModelServer({ rateLimit: 60 });
t.teardown(server.close);

const script = fileURLToPath(new URL('../../../test/clients/milliseconds_readme.py', import.meta.url));

t.test('every README example works against this server', async (t) => {
  const limited = await server.key('limited');
  const out = await run(python, [script], {
    MS_API_KEY: await server.key(),
    MS_BASE_URL: server.url,
    MS_LIMITED_KEY: limited,
  });
  t.equal(out.code, 0, out.stderr.slice(-2000));
  const results = out.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name: string; ok: boolean; detail: unknown; trace?: string });
  t.ok(results.length >= 18, `${results.length} examples ran`);
  for (const r of results) t.ok(r.ok, `${r.name}: ${JSON.stringify(r.detail)}`, { trace: r.trace });
  t.comment(
    `cloudraker-milliseconds README: ${results.filter((r) => r.ok).length}/${results.length} examples hold (${Math.round(out.ms / 1000)} s)`,
  );
});
