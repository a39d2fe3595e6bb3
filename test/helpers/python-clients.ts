// The real Python clients of the hosted service and of the System One wire, from PyPI, in a
// virtual environment under the project's .cache/ (installed there when missing), as
// databases.ts installs PostgreSQL and Redis: the tests drive them exactly as users do.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGES = [
  'cloudraker-milliseconds==0.2.2',
  'typesafe-sdk==0.7.5',
  'jevcompat==0.1.1',
  'jevbench==0.1.0',
];

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/test/helpers -> the repository
const VENV = join(ROOT, '.cache', 'python-clients');
const BIN = join(VENV, 'bin');

export interface PythonClients {
  python: string;
  jevcompat: string;
  jevbench: string;
}

/** The virtual environment with the packages at their pinned versions. */
export function pythonClients(): PythonClients {
  const python = join(BIN, 'python');
  if (!installed(python)) {
    rmSync(VENV, { recursive: true, force: true });
    mkdirSync(join(ROOT, '.cache'), { recursive: true });
    try {
      execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'ignore' });
    } catch {
      // Debian's python3 ships venv (and its pip) separately.
      execFileSync('apt-get', ['install', '-y', '-q', '-o', 'DPkg::Lock::Timeout=600', 'python3-venv'], {
        stdio: 'ignore',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
      execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'ignore' });
    }
    execFileSync(python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', ...PACKAGES], {
      stdio: 'ignore',
    });
    if (!installed(python)) throw new Error(`${PACKAGES.join(', ')} not importable after installing them into ${VENV}`);
  }
  return { python, jevcompat: join(BIN, 'jevcompat'), jevbench: join(BIN, 'jevbench') };
}

function installed(python: string): boolean {
  if (!existsSync(python)) return false;
  const check = `import importlib.metadata as m; assert [m.version(p.split('==')[0]) for p in ${JSON.stringify(PACKAGES)}] == ${JSON.stringify(PACKAGES.map((p) => p.split('==')[1]))}`;
  try {
    execFileSync(python, ['-c', check], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs a command to its end; resolves its exit code and output whatever the code. */
export function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 600_000,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout, stderr, ms: performance.now() - started });
      },
    );
  });
}
