// llama.cpp's own llama-server, for side-by-side benchmarks: built from the same vendored sources
// as the addon with the same instruction sets (native/cpu-flags.cmake), into a cache folder, and
// started on a loopback port. The first build takes several minutes (its log on stderr); later
// calls reuse it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root (this file runs as dist/src/bench/llama-server.js). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface LlamaServerOptions {
  model: string;
  port: number;
  threads: number;
  slots: number;
  contextPerSlot: number;
  batch: number;
}

export interface LlamaServer {
  url: string;
  pid: number;
  stop(): void;
}

/** The build folder: `${XDG_CACHE_HOME:-~/.cache}/decision-machine-1/peer`. */
export function peerBuildDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'decision-machine-1', 'peer', 'build');
}

/** Path of llama-server, configured and built (niced, with no web UI and no TLS) when missing. */
export function ensureLlamaServer(): string {
  const build = peerBuildDir();
  const bin = join(build, 'bin', 'llama-server');
  if (existsSync(bin)) return bin;
  mkdirSync(build, { recursive: true });
  const run = (args: string[]) =>
    execFileSync('nice', ['-n', '15', 'cmake', ...args], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  run([
    '-S',
    join(ROOT, 'native/vendor/llama.cpp'),
    '-B',
    build,
    '-C',
    join(ROOT, 'native/cpu-flags.cmake'),
    '-DCMAKE_BUILD_TYPE=Release',
    '-DBUILD_SHARED_LIBS=OFF',
    '-DLLAMA_BUILD_TESTS=OFF',
    '-DLLAMA_BUILD_EXAMPLES=OFF',
    '-DLLAMA_BUILD_UI=OFF',
    '-DLLAMA_USE_PREBUILT_UI=OFF',
    '-DLLAMA_OPENSSL=OFF',
    '-DLLAMA_BUILD_APP=OFF',
  ]);
  run(['--build', build, '--target', 'llama-server', '-j', '2']);
  return bin;
}

/** Starts llama-server with the service's slot shape; resolves once /health answers 200. */
export async function startLlamaServer(bin: string, o: LlamaServerOptions): Promise<LlamaServer> {
  const log = openSync(join(peerBuildDir(), '..', 'llama-server.log'), 'w');
  const child: ChildProcess = spawn(
    bin,
    [
      '-m',
      o.model,
      '--host',
      '127.0.0.1',
      '--port',
      String(o.port),
      '-t',
      String(o.threads),
      '-tb',
      String(o.threads),
      '-np',
      String(o.slots),
      '-c',
      String(o.contextPerSlot * o.slots),
      '-b',
      String(o.batch),
      '-ub',
      String(o.batch),
    ],
    { stdio: ['ignore', log, log] },
  );
  const url = `http://127.0.0.1:${o.port}`;
  const stop = () => child.kill('SIGTERM');
  for (let waited = 0; waited < 300_000; waited += 500) {
    if (child.exitCode !== null)
      throw new Error(`llama-server exited with ${child.exitCode}; see ${peerBuildDir()}/../llama-server.log`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { url, pid: child.pid!, stop };
    await new Promise((r) => setTimeout(r, 500));
  }
  stop();
  throw new Error('llama-server did not become healthy within 5 minutes');
}
