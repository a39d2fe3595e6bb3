// Hostile audio: a corpus of damaged, lying and foreign files. None may crash the process or be
// answered with a 5xx; each is a 200 (it decodes: silence, noise, a damaged tail) or a clear 4xx.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audioServer, post } from './helpers.js';
import { encode, ensureAudioTools, speak, wavOf, type Format } from './speech.js';

// Transcriptions of damaged audio are slow on two shared cores: more than tap's default 600 s.
t.setTimeout(1_800_000);
ensureAudioTools();
const server = await audioServer({ DM_AUDIO_MAX_SECONDS: '600' });
t.teardown(() => server.close());

function wavHeader(opts: {
  channels?: number;
  rate?: number;
  bits?: number;
  dataBytes?: number;
  riffBytes?: number;
  format?: number;
}): Buffer {
  const { channels = 1, rate = 16000, bits = 16, dataBytes = 0, format = 1 } = opts;
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(opts.riffBytes ?? 36 + dataBytes, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(format, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(((rate * channels * bits) / 8) >>> 0, 28);
  h.writeUInt16LE((channels * bits) / 8, 32);
  h.writeUInt16LE(bits, 34);
  h.write('data', 36);
  h.writeUInt32LE(dataBytes >>> 0, 40);
  return h;
}

function ffmpeg(args: string[], ext: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'dm-hostile-'));
  try {
    execFileSync('ffmpeg', ['-v', 'error', '-y', ...args, join(dir, `out.${ext}`)]);
    return readFileSync(join(dir, `out.${ext}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const speech = speak('This file will be damaged in many different ways before it is sent.', 'en-us');
const encoded = Object.fromEntries(
  (['mp3', 'm4a', 'ogg', 'opus', 'flac', 'webm'] as Format[]).map((f) => [f, encode(speech, f)]),
);
const noise = Float32Array.from({ length: 16000 * 3 }, () => Math.random() * 2 - 1);
const corrupt = (b: Buffer) => {
  const c = Buffer.from(b);
  for (let i = Math.floor(c.length / 3); i < c.length; i += 97) c[i] ^= 0xff;
  return c;
};

const corpus: Record<string, Buffer> = {
  'one byte': Buffer.from([0]),
  'wav header only': wavHeader({}),
  'wav declaring 4 GB of data': wavHeader({ dataBytes: 0xffffffff, riffBytes: 0xffffffff }),
  'wav declaring an hour, holding 1 s': Buffer.concat([
    wavHeader({ dataBytes: 16000 * 2 * 3600 }),
    Buffer.alloc(32000),
  ]),
  'wav with zero channels': Buffer.concat([wavHeader({ channels: 0, dataBytes: 3200 }), Buffer.alloc(3200)]),
  'wav with sample rate 0': Buffer.concat([wavHeader({ rate: 0, dataBytes: 3200 }), Buffer.alloc(3200)]),
  'wav with a 4 GHz sample rate': Buffer.concat([wavHeader({ rate: 0xfffffff0, dataBytes: 3200 }), Buffer.alloc(3200)]),
  'wav with 200 channels': Buffer.concat([wavHeader({ channels: 200, dataBytes: 3200 }), Buffer.alloc(3200)]),
  'wav with 7-bit samples': Buffer.concat([wavHeader({ bits: 7, dataBytes: 3200 }), Buffer.alloc(3200)]),
  'wav with unknown codec tag': Buffer.concat([wavHeader({ format: 0x7777, dataBytes: 3200 }), randomBytes(3200)]),
  'wav, one sample': Buffer.concat([wavHeader({ dataBytes: 2 }), Buffer.alloc(2)]),
  'wav, 10 ms': wavOf(new Float32Array(160), 16000),
  'wav truncated to half': speech.subarray(0, speech.length >> 1),
  'silence, 3 s': wavOf(new Float32Array(48000), 16000),
  'white noise, 3 s': wavOf(noise, 16000),
  'full-scale square wave': wavOf(
    Float32Array.from({ length: 32000 }, (_, i) => (i % 40 < 20 ? 1 : -1)),
    16000,
  ),
  ...Object.fromEntries(
    Object.entries(encoded).flatMap(([f, b]) => [
      [`${f} truncated to 100 bytes`, b.subarray(0, 100)],
      [`${f} truncated to half`, b.subarray(0, b.length >> 1)],
      // Damage that still decodes costs a whole transcription: three formats are enough.
      ...(['mp3', 'opus', 'flac'].includes(f) ? [[`${f} with corrupted bytes`, corrupt(b)]] : []),
    ]),
  ),
  'random bytes, 1 kB': randomBytes(1024),
  'random bytes, 1 MB': randomBytes(1 << 20),
  'RIFF magic then random bytes': Buffer.concat([Buffer.from('RIFF\xff\xff\xff\x7fWAVE', 'latin1'), randomBytes(4096)]),
  'ID3 tag then random bytes': Buffer.concat([
    Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x10', 'latin1'),
    randomBytes(4096),
  ]),
  'OggS magic then random bytes': Buffer.concat([Buffer.from('OggS\x00\x02', 'latin1'), randomBytes(4096)]),
  'fLaC magic then random bytes': Buffer.concat([Buffer.from('fLaC', 'latin1'), randomBytes(4096)]),
  'EBML (webm) magic then random bytes': Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), randomBytes(4096)]),
  'mp4 ftyp then random bytes': Buffer.concat([
    Buffer.from('\x00\x00\x00\x18ftypM4A \x00\x00\x02\x00isomiso2', 'latin1'),
    randomBytes(4096),
  ]),
  'an HLS playlist naming a local file': Buffer.from(
    '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n',
  ),
  'an ffconcat script naming a local file': Buffer.from('ffconcat version 1.0\nfile /etc/passwd\n'),
  'a JSON document': Buffer.from(JSON.stringify({ audio: 'aGVsbG8=' })),
  'a PNG image': Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
    'hex',
  ),
  'a video with no audio stream': ffmpeg(
    ['-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x64:rate=5', '-c:v', 'mpeg4'],
    'mp4',
  ),
  'an hour of silence in a small opus file': ffmpeg(
    ['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '3700', '-c:a', 'libopus', '-b:a', '6k'],
    'opus',
  ),
};

t.test(`a corpus of ${Object.keys(corpus).length} hostile files: no crash, no 5xx`, async (t) => {
  t.ok(Object.keys(corpus).length >= 30);
  const outcomes: string[] = [];
  for (const [name, body] of Object.entries(corpus)) {
    const res = await post(server.url, body, 'audio/wav');
    outcomes.push(`${res.status} ${name}${res.status === 200 ? '' : `: ${res.json.error?.message}`}`);
    t.ok([200, 400, 413].includes(res.status), `${name}: ${res.status}`);
    if (res.status !== 200)
      t.match(res.json, { error: { code: /^(invalid_request|payload_too_large)$/, message: /\S/ } }, name);
    else t.equal(typeof res.json.text, 'string', name);
  }
  t.comment(outcomes.join('\n'));
  const after = await post(server.url, speech, 'audio/wav');
  t.equal(after.status, 200, 'the service still transcribes afterwards');
  t.match(after.json.text, /damaged/i);
});
