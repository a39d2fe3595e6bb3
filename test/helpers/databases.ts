// Real PostgreSQL and Redis servers for tests, from Debian's packages (installed here when
// missing), each on a free loopback port with its data in a fresh temporary directory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
  /** Ends the server with `signal` (SIGINT: PostgreSQL's fast shutdown; SIGKILL: a crash), keeping its data. */
  halt(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data (after halt); resolves when it answers. */
  restart(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

export async function startPostgres(): Promise<RunningServer> {
  const bin = postgresBin() ?? (aptInstall('postgresql'), postgresBin());
  if (!bin) throw new Error('PostgreSQL server binaries not found after installing postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'dm-pg-'));
  // PostgreSQL refuses to run as root: as root, run it as the package's postgres user.
  const owner: { uid?: number; gid?: number } = process.getuid?.() === 0 ? { uid: id('-u'), gid: id('-g') } : {};
  if (owner.uid !== undefined) chownSync(dir, owner.uid, owner.gid!);
  execFileSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'], {
    stdio: 'ignore',
    cwd: dir,
    ...owner,
  });
  const port = await freePort();
  const args = [
    '-D',
    join(dir, 'data'),
    '-k',
    dir,
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-c',
    'fsync=off',
    '-c',
    'max_connections=50',
  ];
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const probe = async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    await client.end();
  };
  return restartable(url, dir, 'SIGINT', probe, () =>
    spawn(join(bin, 'postgres'), args, { stdio: 'ignore', cwd: dir, ...owner }),
  );
}

export async function startRedis(): Promise<RunningServer> {
  if (!onPath('redis-server')) aptInstall('redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'dm-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const probe = async () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {}); // refused until the server listens: the probe retries
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  };
  return restartable(url, dir, 'SIGTERM', probe, () =>
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    ),
  );
}

// A server process that can be ended and started again over the same port and data directory.
async function restartable(
  url: string,
  dir: string,
  stopSignal: NodeJS.Signals,
  probe: () => Promise<void>,
  launch: () => ChildProcess,
): Promise<RunningServer> {
  let child = launch();
  await ready(child, probe);
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    }
    running.delete(child);
  };
  return {
    url,
    halt,
    // A PostgreSQL killed -9 can leave its backends a moment: a start refused for that is tried again.
    restart: async () => {
      for (let attempt = 0; ; attempt++) {
        child = launch();
        try {
          return await ready(child, probe);
        } catch (err) {
          if (attempt === 20) throw err;
          await halt('SIGKILL');
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    },
    stop: async () => {
      await halt(stopSignal);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .find((v) => existsSync(join(root, v, 'bin', 'postgres')));
  return version && join(root, version, 'bin');
}

/** Installs a Debian package (apt-get update first when the package lists are stale). */
export function aptInstall(pkg: string): void {
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '-q', '-o', 'DPkg::Lock::Timeout=600', pkg], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update', '-q', '-o', 'DPkg::Lock::Timeout=600'], { stdio: 'ignore' });
    install();
  }
}

export function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, command)));
}

function id(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function ready(child: ChildProcess, probe: () => Promise<void>): Promise<void> {
  running.add(child);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before it was ready`);
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
