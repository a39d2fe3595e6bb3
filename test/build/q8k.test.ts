// The addon's AVX-512 Q8_K quantizer (native/ggml/quantize_q8k.cpp), which ggml's calls of its
// scalar reference are linked to, writes the reference's bytes: native/checks/q8k.cpp compares
// the two on 2,000 rows (random scales, zero blocks, tied magnitudes, exact halves, outliers).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { arch } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

t.test('Q8_K activations are quantized exactly as ggml reference does', { skip: arch() !== 'x64' }, async (t) => {
  execFileSync('cmake', ['--build', 'build', '--target', 'q8k-check'], { cwd: root, stdio: 'ignore' });
  const out = execFileSync(`${root}build/q8k-check`, { encoding: 'utf8' });
  t.match(out, /identical to the reference/);
});
