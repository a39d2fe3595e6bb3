// JevBench's cases and gold, as the JevBench benches read them: jevbench-240's base cases from the
// installed package (the suite's virtual environment), the gold of its repository at the commit
// the leaderboard of release 0.1.0 was scored on (fetched once into the cache, checked by sha256).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pythonClients } from '../../test/helpers/python-clients.js';
import type { Content } from '../../src/api/systemone.js';
import { render } from '../../src/decisions/questions.js';

export const GOLD = Object.freeze({
  url: 'https://raw.githubusercontent.com/JevBench/jevbench/1a3a115105872691137f6c7a7bcc83be95d7ebac/data/gold.jsonl',
  sha256: '25438a91d951ccc97fa05cc796fd74fec75f34ceae39c347f4e4ba6d4e3fe83a',
  cache: join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'decision-machine-1', 'jevbench', 'gold.jsonl'),
});

export interface Case {
  id: string;
  domain: string;
  state: unknown;
  questions: Record<string, { type: 'noul' | 'choice' | 'score'; instructions?: unknown; criteria?: unknown }>;
}
export type Gold = Map<string, Record<string, boolean | string | number>>;

export const jsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

/** The gold answers by case id: `given`'s, else the pinned file (fetched when missing). */
export function gold(given?: string): Gold {
  const file = given ?? pinnedGold();
  return new Map(
    jsonl<{ id: string; gold: Record<string, boolean | string | number> }>(file).map((g) => [g.id, g.gold]),
  );
}

function pinnedGold(): string {
  if (!existsSync(GOLD.cache)) {
    mkdirSync(join(GOLD.cache, '..'), { recursive: true });
    execFileSync('curl', ['-fsSL', '-o', GOLD.cache, GOLD.url], { stdio: 'inherit' });
  }
  const sha = createHash('sha256').update(readFileSync(GOLD.cache)).digest('hex');
  if (sha !== GOLD.sha256) throw new Error(`${GOLD.cache}: sha256 ${sha}, expected ${GOLD.sha256}`);
  return GOLD.cache;
}

/** jevbench-240's base cases, the first `perDomain` of each domain (all when Infinity). */
export function baseCases(perDomain: number): Case[] {
  const python = pythonClients().python;
  const pkg = execFileSync(python, ['-c', 'import jevbench, os; print(os.path.dirname(jevbench.__file__))'], {
    encoding: 'utf8',
  }).trim();
  const seen = new Map<string, number>();
  return jsonl<Case>(join(pkg, 'suites', 'jevbench-240', 'cases.jsonl')).filter((c) => {
    const n = seen.get(c.domain) ?? 0;
    seen.set(c.domain, n + 1);
    return n < perDomain;
  });
}

/** A question of a base case that the gold answers: its id `case/question`, the state and the question as read. */
export interface GoldQuestion {
  id: string;
  text: string;
  question?: string;
  criteria: unknown;
  gold: boolean | string | number;
}

/** The `type` questions of the first `perDomain` cases of each domain that the gold answers (not "unknown"). */
export function goldQuestions(type: 'noul' | 'choice' | 'score', perDomain: number, goldFile?: string): GoldQuestion[] {
  const golds = gold(goldFile);
  return baseCases(perDomain).flatMap((c) =>
    Object.entries(c.questions).flatMap(([id, q]) => {
      const want = golds.get(c.id)?.[id];
      if (q.type !== type || want === undefined || want === 'unknown') return [];
      const question = q.instructions == null ? undefined : render(q.instructions as Content);
      return [
        {
          id: `${c.id}/${id}`,
          text: render(c.state as Content),
          ...(question ? { question } : {}),
          criteria: q.criteria,
          gold: want,
        },
      ];
    }),
  );
}
