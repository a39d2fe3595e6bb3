// The C++ of native/ (not native/vendor) is formatted by .clang-format: Debian's clang-format 14,
// installed here when missing, as the PostgreSQL tests install their server.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aptInstall, onPath } from '../helpers/databases.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const FOLDERS = ['native/core', 'native/addon', 'native/ggml', 'native/checks'];

t.test('native C++ follows .clang-format (line length, naming of includes, layout)', async (t) => {
  if (!onPath('clang-format')) aptInstall('clang-format');
  const files = FOLDERS.flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => /\.(cpp|h)$/.test(f))
      .map((f) => join(dir, f)),
  );
  t.ok(files.length > 20, `${files.length} files checked`);
  let report = '';
  try {
    execFileSync('clang-format', ['--dry-run', '--Werror', ...files], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    report = String((err as { stderr?: string }).stderr ?? err).slice(0, 2000);
  }
  t.equal(report, '', 'clang-format would change nothing (fix with: clang-format -i <file>)');
});
