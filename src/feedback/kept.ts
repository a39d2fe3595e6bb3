// The decisions of a delivered answer that may be corrected (POST .../feedback): one per result,
// in result order, each kept as the fit line it would be without its `expect` ({cap, req} with
// one text, as `decision-machine fit` reads it) and what it answered, in expect's form. The
// capabilities a head can learn (src/heads/signature.ts HEAD_CAPABILITIES) make them; the others
// (answer, extract, entities) have nothing a correction could teach.
import { randomBytes } from 'node:crypto';
import { HEAD_CAPABILITIES } from '../heads/signature.js';
import type { Content, Question } from '../api/systemone.js';
import type { Label } from '../decisions/labels.js';
import { definitionOf, render, type Answers, type SystemOneAnswer } from '../decisions/questions.js';

/** A kept decision before the gate gives it its organization and time. */
export interface DecisionDraft {
  id: string;
  capability: string;
  line: string;
  answer: string;
  head: string;
}

/**
 * An answer's drafts, and whether it was a batch (its ids go in x-decision-ids). `ids`, when
 * given, are the ids the reply names instead (System One: one per state, its questions kept as
 * `<id>/<question id>`).
 */
export interface AnswerDrafts {
  drafts: DecisionDraft[];
  list: boolean;
  ids?: string[];
}

type Req = Record<string, unknown>;
type Result = Record<string, unknown>;

/** What each correctable capability answered, as its fit line's expect holds it. */
const ANSWER: Record<string, (r: Result) => Record<string, unknown>> = {
  'yes-no': (r) => ({ answer: r.answer }),
  classify: (r) => ({ label: r.label }),
  'classify-tree': (r) => ({ path: r.path }),
  rate: (r) => ({ level: r.level }),
  verify: (r) => ({ matches: r.matches }),
};

export const newDecisionId = (): string => `dec_${randomBytes(12).toString('hex')}`;

/**
 * The drafts of a capability's answer: `input` as validated, `body` as answered, `heads` the
 * x-decision-head values (the first one decided). Empty for a capability no head can learn, and
 * for a yes-no without both a text and a statement (a statement alone decides nothing of a text).
 */
export function draftsOf(capability: string, input: Req, body: unknown, heads?: string[]): AnswerDrafts | undefined {
  if (!(HEAD_CAPABILITIES as readonly string[]).includes(capability)) return undefined;
  const results = flatResults(body);
  const reqs = singleRequests(capability, input);
  if (reqs.length === 0 || reqs.length !== results.length) return undefined;
  const head = heads?.[0]?.split(';')[0] ?? '';
  const drafts = reqs.map((req, i) => ({
    id: newDecisionId(),
    capability,
    line: JSON.stringify({ cap: capability, req }),
    answer: JSON.stringify(ANSWER[capability]!(results[i]!)),
    head,
  }));
  return { drafts, list: (body as { results?: unknown }).results !== undefined };
}

/** The results of a body in order, nested batches (yes-no's texts x statements) flattened. */
function flatResults(body: unknown): Result[] {
  const list = (body as { results?: unknown[] }).results;
  if (!list) return [body as Result];
  return list.flatMap((r) => (r as { results?: Result[] }).results ?? [r as Result]);
}

/** One request per result: one text (and for yes-no one statement), the rest as asked. */
function singleRequests(capability: string, input: Req): Req[] {
  const { text, texts, statement, statements, ...rest } = input;
  const all = [...(text !== undefined ? [text] : []), ...((texts as string[] | undefined) ?? [])];
  if (capability !== 'yes-no') return all.map((t) => ({ ...rest, text: t }));
  const claims = [...(statement !== undefined ? [statement] : []), ...((statements as string[] | undefined) ?? [])];
  if (all.length === 0 || claims.length === 0) return [];
  return all.flatMap((t) => claims.map((s) => ({ ...rest, text: t, statement: s })));
}

/** The header a reply carries its ids in: one result's x-decision-id, a batch's x-decision-ids. */
export function decisionHeaders({ drafts, list, ids = drafts.map((d) => d.id) }: AnswerDrafts): Record<string, string> {
  return list ? { 'x-decision-ids': ids.join(',') } : { 'x-decision-id': ids[0]! };
}

/**
 * A System One answer's drafts: each question of each state kept as the typed decision it is (a
 * noul as yes-no with its criteria as when_true/when_false, a choice as classify with the
 * descriptions, a score as rate), under `<state's id>/<question id>`. A noul without instructions
 * asks nothing of a text and is not kept.
 */
export function systemOneDrafts(
  states: Content[],
  questions: Record<string, Question>,
  answers: Answers[],
  list: boolean,
): AnswerDrafts | undefined {
  const ids = states.map(() => newDecisionId());
  const drafts = states.map(render).flatMap((text, s) =>
    Object.entries(questions).flatMap(([qid, q]) => {
      const d = definitionOf(q);
      if (!d) return [];
      const { capability, ...fields } = d as Record<string, unknown> & { capability: string };
      const req: Req = { text, ...fields };
      if (capability === 'classify')
        req.labels = Object.fromEntries((d as { labels: Label[] }).labels.map((l) => [l.name, l.description ?? '']));
      return [
        {
          id: `${ids[s]}/${qid}`,
          capability,
          line: JSON.stringify({ cap: capability, req }),
          answer: JSON.stringify(answerOf(answers[s]![qid]!)),
          head: '',
        },
      ];
    }),
  );
  return drafts.length === 0 ? undefined : { drafts, list, ids };
}

function answerOf(a: SystemOneAnswer): Record<string, unknown> {
  if (a.type === 'noul') return { answer: a.noul >= 0.5 };
  if (a.type === 'choice') return { label: a.choice };
  const p = Object.entries(a.probabilities);
  return { level: Number(p.reduce((best, x) => (x[1] > best[1] ? x : best))[0]) };
}
