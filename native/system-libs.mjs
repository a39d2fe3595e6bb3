// The system libraries the addon links: FFmpeg's decoding libraries (in-process audio decoding).
// Missing ones are installed with apt-get on Debian/Ubuntu when running as root; otherwise the
// build stops with the command to run.
import { execFileSync } from 'node:child_process';

const PKG_CONFIG = ['libavformat', 'libavcodec', 'libswresample', 'libavutil'];
const APT = ['pkg-config', 'libavformat-dev', 'libavcodec-dev', 'libswresample-dev', 'libavutil-dev'];

function present() {
  try {
    execFileSync('pkg-config', ['--exists', ...PKG_CONFIG], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function ensureSystemLibraries() {
  if (present()) return;
  const command = `apt-get install -y ${APT.join(' ')}`;
  if (process.getuid?.() !== 0) throw new Error(`FFmpeg development libraries are missing: run \`sudo ${command}\``);
  console.log(`installing ${APT.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', ...APT], { stdio: 'inherit', env });
  if (!present()) throw new Error('FFmpeg development libraries still missing after apt-get');
}
