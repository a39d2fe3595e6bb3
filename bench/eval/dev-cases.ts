// The development sets: ../shared/eval beside the repository (or beside the worktrees' folder).
// bench/eval/eval.ts runs them; the readout benches report on them and never fit on them.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
export const SHARED_EVAL =
  [join(root, '../shared/eval'), join(root, '../../shared/eval')].find(existsSync) ?? join(root, '../shared/eval');
export const DEV_FILES = ['dev-decisions.jsonl', 'pool-dev.jsonl', 'external/dev.jsonl'];

export interface DevCase<Req, Expect> {
  id: string;
  set: string; // the line's own, else its file's name
  req: Req;
  expect: Expect;
}

/** The development sets' cases of one capability. */
export function devCases<Req, Expect>(cap: string, folder = SHARED_EVAL): DevCase<Req, Expect>[] {
  const files = DEV_FILES.map((f) => join(folder, f)).filter(existsSync);
  if (!files.length) throw new Error(`no development sets in ${folder}`);
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as DevCase<Req, Expect> & { cap: string; set?: string })
      .filter((c) => c.cap === cap)
      .map((c) => ({ id: c.id, set: c.set ?? basename(file, '.jsonl'), req: c.req, expect: c.expect })),
  );
}

/** A development rate item as the rate benches read it: the gold level and how far off still counts. */
export interface DevRateItem {
  id: string;
  source: string; // `dev:<set>`
  text: string;
  scale: string[];
  gold: number;
  tol: number;
}

/** The development sets' rate items. */
export function devRateItems(folder = SHARED_EVAL): DevRateItem[] {
  return devCases<{ text: string; scale: string[] }, { level: number; tol?: number }>('rate', folder).map((c) => ({
    id: c.id,
    source: `dev:${c.set}`,
    text: c.req.text,
    scale: c.req.scale,
    gold: c.expect.level,
    tol: c.expect.tol ?? 0,
  }));
}
