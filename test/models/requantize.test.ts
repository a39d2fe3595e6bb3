// A requantized entry is made here from another entry's pinned file: the requantization must give
// the pinned bytes on any machine, or the store refuses it.
import t from 'tap';
import { copyFile, link, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { MODELS } from '../../src/models/manifest.js';
import { resolveModel } from '../../src/models/store.js';

const entry = MODELS.find((m) => m.sources.some((s) => s.kind === 'requantize'))!;
const source = entry.sources.find((s) => s.kind === 'requantize')!;

t.test(`${entry.id} is requantized to its pinned bytes`, async (t) => {
  if (source.kind !== 'requantize') return;
  // The pulled Q4_K_M file, linked with its stamp into an empty cache: only the requantization runs.
  const original = await resolveModel(source.from, { cacheDir: loadConfig().cacheDir, offline: true });
  const dir = await mkdtemp(join(tmpdir(), 'dm-requantize-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  await mkdir(cache);
  for (const file of [original, `${original}.verified`]) {
    const to = join(cache, basename(file));
    await link(file, to).catch(() => copyFile(file, to)); // another file system: a copy
  }

  let said = '';
  const stderr = { write: (s: string) => ((said += s), true) } as NodeJS.WritableStream;
  const made = await resolveModel(entry.id, { cacheDir: cache, offline: true, stderr });
  t.equal(made, join(cache, entry.file));
  t.match(said, `${entry.id}: ${source.from} requantized (ffn_down to q4_k`, 'size and sha256 matched the pins');
  t.same(
    (await readdir(cache)).sort(),
    [basename(original), `${basename(original)}.verified`, entry.file, `${entry.file}.verified`].sort(),
  );
});
