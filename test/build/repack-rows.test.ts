// ggml's repacked Q4_K kernels give a row of a batch the same bits whatever the batch holds (the
// gemv the addon links in, native/ggml/gemv_q4k.cpp, scales as the gemm does):
// native/checks/repack_rows.cpp compares each row alone with the same row in batches of 1 to 33.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { arch } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

t.test('a row of a batch gets the bits it gets alone', { skip: arch() !== 'x64' }, async (t) => {
  execFileSync('cmake', ['--build', 'build', '--target', 'repack-rows-check'], { cwd: root, stdio: 'ignore' });
  const out = execFileSync(`${root}build/repack-rows-check`, { encoding: 'utf8' });
  t.match(out, /every row identical/);
});
