#!/usr/bin/env node
// Builds the addon: system libraries it links (FFmpeg's, for audio decoding) and pinned sources
// first (native/vendor.mjs), then cmake-js into build/.
// Extra arguments go to cmake-js, e.g. `node native/build.mjs --CDDM_CUDA=ON`.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCES, vendorSource } from './vendor.mjs';
import { ensureSystemLibraries } from './system-libs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
ensureSystemLibraries();
for (const src of SOURCES) vendorSource(src);
const cmakeJs = createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js');
execFileSync(process.execPath, [cmakeJs, 'compile', '--out', 'build', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
