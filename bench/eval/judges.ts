// How bench/eval/eval.ts calls each capability and judges its output against the gold, following the gold
// conventions of ../shared/eval/README.md. Each decision may carry the probability the service
// stated for it (`outcome`) and, for choices among options, every option's score and the gold
// option's index (what bench/train/calibrate.ts fits on).
import { agrees } from '../../src/decisions/verify.js';
import type { DecisionMachine } from '../../src/index.js';
import type { Outcome } from './metrics.js';

export interface Decision {
  got: string;
  want: string;
  ok: boolean;
  outcome?: Outcome;
  /** Choices among options: the probabilities given each, and the gold option's index (-1: not among them). */
  choices?: { scores: number[]; gold: number }[];
  /**
   * verify: whether a value the text gives agrees with the one asked about (+1), none does (-1), or none is given (0).
   */
  agreement?: number;
}

export interface Judge {
  call(dm: DecisionMachine, req: Record<string, unknown>): Promise<unknown>;
  judge(out: any, expect: Record<string, any>, req: Record<string, any>, answerAny?: (string | null)[]): Decision[];
}

const bit = (b: boolean): 0 | 1 => (b ? 1 : 0);

/** A choice among options: judged by the winner, its stated probability against being right. */
function choice(names: string[], scores: number[], got: string, want: string): Decision {
  const ok = got === want;
  return {
    got: `${got} (p=${Math.max(...scores).toFixed(3)})`,
    want,
    ok,
    outcome: { p: Math.max(...scores), y: bit(ok) },
    choices: [{ scores, gold: names.indexOf(want) }],
  };
}

/** Leaves of a JSON value: nested objects open up, arrays of scalars compare as sets. */
function leaves(o: any, prefix = ''): [string, string][] {
  return Object.entries(o ?? {}).flatMap(([k, v]): [string, string][] => {
    if (v && typeof v === 'object' && !Array.isArray(v)) return leaves(v, `${prefix}${k}.`);
    const scalars = Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object');
    return [
      [`${prefix}${k}`, JSON.stringify(scalars ? [...v].map((x) => JSON.stringify(x)).sort() : v) ?? 'undefined'],
    ];
  });
}

export const judges: Record<string, Judge> = {
  'yes-no': {
    call: (dm, req) => dm.yesNo(req as any),
    judge: (out, expect) => {
      const results: any[] = 'results' in out ? out.results : [out];
      const want: boolean[] = expect.answers ?? [expect.answer];
      return results.map((r, i) => ({
        got: `${r.answer} (p=${r.probability.toFixed(3)}) "${r.statement}"`,
        want: String(want[i]),
        ok: r.answer === want[i],
        outcome: { p: r.probability, y: bit(want[i]!) },
      }));
    },
  },
  classify: {
    call: (dm, req) => dm.classify(req as any),
    judge: (out, expect) => [choice(Object.keys(out.scores), Object.values(out.scores), out.label, expect.label)],
  },
  'classify-tree': {
    // The path is the decision; its stated probability is the product of the levels'. Each level
    // reached on the gold path is a choice among that level's labels.
    call: (dm, req) => dm.classifyTree(req as any),
    judge: (out, expect) => {
      const ok = out.path.join('\u0000') === expect.path.join('\u0000');
      const onPath = out.levels.filter(
        (_: any, i: number) => out.path.slice(0, i).join('\u0000') === expect.path.slice(0, i).join('\u0000'),
      );
      const choices = onPath.map((l: any, i: number) => ({
        scores: Object.values(l.scores) as number[],
        gold: Object.keys(l.scores).indexOf(expect.path[i]),
      }));
      return [
        {
          got: `${out.path.join(' > ')} (p=${out.probability.toFixed(3)})`,
          want: expect.path.join(' > '),
          ok,
          outcome: { p: out.probability, y: bit(ok) },
          choices,
        },
      ];
    },
  },
  rate: {
    // Exact level unless the gold gives a tolerance; the top level's probability against being exact.
    call: (dm, req) => dm.rate(req as any),
    judge: (out, expect) => {
      const ok = Math.abs(out.level - expect.level) <= (expect.tol ?? 0);
      const top = out.scores[out.level];
      return [
        {
          got: `${out.level} (p=${top.toFixed(3)})`,
          want: `${expect.level}±${expect.tol ?? 0}`,
          ok,
          outcome: { p: top, y: bit(out.level === expect.level) },
          choices: [{ scores: out.scores, gold: expect.level }],
        },
      ];
    },
  },
  answer: {
    // The exact span or null; any of `answer_any` is accepted. A span's probability against being accepted.
    call: (dm, req) => dm.answer(req as any),
    judge: (out, expect, _req, answerAny) => {
      const results: any[] = 'results' in out ? out.results : [out];
      const want: (string | null)[] = expect.answers ?? [expect.answer];
      return results.map((r, i) => {
        const accepted = results.length === 1 && answerAny ? answerAny : [want[i]!];
        const ok = accepted.includes(r.answer);
        return {
          got: JSON.stringify(r.answer),
          want: accepted.map((a) => JSON.stringify(a)).join(' | '),
          ok,
          ...(r.answer !== null ? { outcome: { p: r.probability, y: bit(ok) } } : {}),
        };
      });
    },
  },
  entities: {
    // F1 over (type, text) pairs: each expected pair is one decision, and each extra pair found is a miss too.
    call: (dm, req) => dm.entities(req as any),
    judge: (out, expect) => {
      const found = new Map<string, number>(out.entities.map((e: any) => [`${e.type}: ${e.text}`, e.probability]));
      const want = new Set<string>(expect.entities.map((e: any) => `${e.type}: ${e.text}`));
      return [
        ...[...want].map((w) => ({
          got: found.has(w) ? w : '(missing)',
          want: w,
          ok: found.has(w),
          ...(found.has(w) ? { outcome: { p: found.get(w)!, y: 1 as const } } : {}),
        })),
        ...[...found]
          .filter(([g]) => !want.has(g))
          .map(([g, p]) => ({ got: g, want: '(nothing)', ok: false, outcome: { p, y: 0 as const } })),
      ];
    },
  },
  extract: {
    // Field accuracy: every expected leaf is one decision (absent fields expect null).
    call: (dm, req) => dm.extract(req as any),
    judge: (out, expect) => {
      const got = Object.fromEntries(leaves(out.data));
      return leaves(expect.data).map(([k, want]) => ({
        got: `${k}=${got[k] ?? 'undefined'}`,
        want,
        ok: got[k] === want,
      }));
    },
  },
  verify: {
    call: (dm, req) => dm.verify(req as any),
    judge: (out, expect, req) => [
      {
        got: `${out.matches} (p=${out.probability.toFixed(3)}, found ${JSON.stringify(out.found)})`,
        want: String(expect.matches),
        ok: out.matches === expect.matches,
        outcome: { p: out.probability, y: bit(expect.matches) },
        agreement: out.found.length === 0 ? 0 : out.found.some((f: string) => agrees(f, req.value)) ? 1 : -1,
      },
    ],
  },
};
