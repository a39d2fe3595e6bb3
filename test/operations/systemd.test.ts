// The systemd unit in deploy/: `systemd-analyze verify` finds nothing to report, and the
// hardening the docs promise is in it. Debian's systemd package is installed when the binary is
// missing (as test/helpers/databases.ts installs PostgreSQL); verify needs no running systemd.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { aptInstall, onPath } from '../helpers/databases.js';

const repo = join(dirname(new URL(import.meta.url).pathname), '..', '..', '..');
const unit = readFileSync(join(repo, 'deploy', 'decision-machine.service'), 'utf8');
if (!onPath('systemd-analyze')) aptInstall('systemd');

t.test('systemd-analyze verify: clean', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-unit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // verify checks that ExecStart's program exists: point the unit at this checkout and this node.
  const here = unit.replaceAll('/opt/decision-machine-1', repo).replace('/usr/bin/node', process.execPath);
  const file = join(dir, 'decision-machine.service');
  writeFileSync(file, here);
  const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.equal(run.stdout + run.stderr, '', 'nothing reported');
  const security = spawnSync('systemd-analyze', ['security', '--offline=true', file], { encoding: 'utf8' });
  const exposure = /Overall exposure level for decision-machine\.service: ([\d.]+)/.exec(security.stdout)?.[1];
  t.comment(`systemd-analyze security --offline=true: exposure ${exposure}`);
  t.ok(Number(exposure) <= 2, `exposure level ${exposure} (0 safest, 10 unprotected)`);
});

t.test('its own user, a read-only system, two writable paths, restart on failure', async (t) => {
  const set = (key: string) =>
    unit
      .split('\n')
      .filter((l) => l.startsWith(`${key}=`))
      .map((l) => l.slice(key.length + 1));
  t.same(set('User'), ['decision-machine']);
  t.same(set('ProtectSystem'), ['strict'], 'the whole file system read-only');
  t.same(set('ProtectHome'), ['yes']);
  t.same(set('CacheDirectory'), ['decision-machine'], 'the model cache is writable');
  t.same(set('StateDirectory'), ['decision-machine'], 'the store is writable');
  t.same(set('ReadWritePaths'), [], 'and nothing else');
  t.ok(set('Environment').includes('DM_CACHE_DIR=/var/cache/decision-machine/models'));
  t.ok(set('Environment').includes('DM_DATABASE_URL=/var/lib/decision-machine/service.db'));
  t.same(set('Restart'), ['on-failure']);
  t.same(set('NoNewPrivileges'), ['yes']);
  t.same(set('CapabilityBoundingSet'), ['']);
});
