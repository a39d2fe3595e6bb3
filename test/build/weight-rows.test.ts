// Every kernel this build multiplies the model's weights with gives a row of a batch the bits it
// gets alone (ggml's repacked Q4_K gemv as the addon links it, native/ggml/gemv_q4k.cpp; Intel AMX's
// lone-row and tile kernels where built): native/checks/weight_rows.cpp compares each row alone with
// the same row in batches of 2 to 33, through ggml's graph, for Q4_K and Q6_K weights.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { arch } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

t.test('a row of a batch gets the bits it gets alone', { skip: arch() !== 'x64' }, async (t) => {
  execFileSync('cmake', ['--build', 'build', '--target', 'weight-rows-check'], { cwd: root, stdio: 'ignore' });
  const out = execFileSync(`${root}build/weight-rows-check`, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  t.match(out, /q4_K weights in (CPU_REPACK|AMX)/, "the model's Q4_K weights take the fast kernels");
  t.notMatch(out, /differs/);
});
