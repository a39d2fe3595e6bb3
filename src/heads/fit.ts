// Fitting heads on a deployment's own labelled examples (`decision-machine fit FILE`, and `fit` in
// the library). The file is JSONL as ../shared/eval's decision files are: {cap, req, expect} per
// line. Lines are grouped by signature; each group is read with the engine (hidden states and the
// zero-shot reading), and a head is fitted where cross-validation shows it beats the zero-shot
// reading: the penalty is chosen among a few strengths by stratified k-fold accuracy, the zero-shot
// reading itself being one of the candidates, so a few examples cannot make a decision worse on
// average. A head that passes is then checked against the route itself (the shipped zero-shot
// decision, which reads whole option names and is often better than the head's own first-token
// reading) on a stratified sample read within a time budget: where the route is right more often
// than the head's cross-validated choices on those examples, the head is not stored. Nothing is
// stored unless the whole file is valid.
import type { Engine, Session } from '../engine/engine.js';
import { CAPABILITIES, DecisionSet } from '../decisions/capabilities.js';
import { labelsOf } from '../decisions/labels.js';
import { ERRORS } from '../errors.js';
import { Progress } from '../models/progress.js';
import type { Store } from '../store/store.js';
import { encodeParams, type HeadMeta } from './heads.js';
import type { Example } from './logistic.js';
import { learn } from './learn.js';
import { HeadReader } from './reading.js';
import { READING_VERSION } from '../decisions/reading.js';
import { shuffleInPlace, uniform } from './random.js';
import {
  classifySignature,
  describeDefinition,
  headId,
  HEAD_CAPABILITIES,
  rateSignature,
  treeSignature,
  verifySignature,
  yesNoSignature,
  type Signature,
} from './signature.js';
import { childrenOf, type Tree } from '../decisions/tree-paths.js';

/** One labelled text of the file. */
export interface LabelledLine {
  line: number;
  sig: Signature;
  text: string;
  /** The line's validated request, as the route would be asked it. */
  req: Record<string, unknown>;
  /** verify's value, as the route reads it. */
  value?: string;
  outcome: number;
  /** Set when only the text's SHA-256 was kept (src/feedback/hashed-texts.ts): `text` is '', never read. */
  textSha256?: string;
}

/** What fitting one signature came to. */
export interface SignatureReport {
  id: string;
  capability: string;
  description: string;
  examples: number;
  outcomes: number;
  /** Cross-validated accuracy of the zero-shot reading and of the chosen head (null: not fitted). */
  zeroShot: number | null;
  fitted: number | null;
  /** The route's accuracy on the examples it was asked (`routeExamples` of them; null: not asked). */
  route: number | null;
  routeExamples: number;
  /** The chosen penalty strength; null when the zero-shot reading was kept. */
  strength: number | null;
  stored: boolean;
  seconds: number;
  note: string;
}

export interface FitOptions {
  /** Where heads go; without it the heads are fitted and reported, not stored. */
  store?: Store;
  /** SHA-256 of the model file (src/models/identity.ts). */
  model: string;
  /** Progress while reading; nothing when absent. */
  progress?: NodeJS.WritableStream & { isTTY?: boolean };
  folds?: number;
  seed?: number;
  /** Seconds the route may spend per signature on the check against it (default 60; 0: no check). */
  routeSeconds?: number;
  /** Whose heads these are: '' (the default) for the deployment's, else that organization's alone. */
  organization?: string;
}

const MIN_EXAMPLES = 8;
const CHUNK = 16; // texts per job
const ROUTE_SECONDS = 60;
const ROUTE_MAX = 64; // examples the route is asked at most, per signature

/** Parses the file; throws a ServiceError naming the first bad line. */
export function parseExamples(content: string): LabelledLine[] {
  const out: LabelledLine[] = [];
  const lines = content.split('\n');
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    out.push(parseLine(raw, i + 1));
  });
  if (out.length === 0) throw ERRORS.invalidRequest('file: no examples (no non-blank line)');
  return out;
}

function parseLine(raw: string, line: number): LabelledLine {
  let item: unknown;
  try {
    item = JSON.parse(raw);
  } catch (err) {
    throw ERRORS.invalidRequest(`line ${line}: not JSON (${(err as Error).message})`);
  }
  return readLine(item, line, `line ${line}: `);
}

/**
 * One fit line, parsed ({cap, req, expect}); throws a ServiceError whose message names the field,
 * after `where` (a file's line number; nothing for a correction sent over HTTP).
 */
export function readLine(value: unknown, line = 1, where = ''): LabelledLine {
  const bad = (msg: string) => ERRORS.invalidRequest(`${where}${msg}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('not a JSON object');
  const item = value as { cap?: unknown; req?: unknown; expect?: Record<string, unknown> };
  const cap = item.cap;
  if (typeof cap !== 'string' || !(HEAD_CAPABILITIES as readonly string[]).includes(cap)) {
    throw bad(`cap: ${JSON.stringify(cap)} cannot be fitted (${HEAD_CAPABILITIES.join(', ')})`);
  }
  const validate = CAPABILITIES.find((c) => c.name === cap)!.validate;
  let req: Record<string, unknown>;
  try {
    req = validate(item.req) as Record<string, unknown>;
  } catch (err) {
    throw bad(`req: ${(err as Error).message}`);
  }
  if (typeof req.text !== 'string') throw bad('req.text: one text per line');
  const expect = item.expect;
  if (expect === null || typeof expect !== 'object') throw bad('expect: missing');
  if (cap === 'yes-no') {
    if (typeof req.statement !== 'string') throw bad('req.statement: one statement per line');
    if (typeof expect.answer !== 'boolean') throw bad('expect.answer: true or false');
    const sig = yesNoSignature(req.statement, req.when_true as string, req.when_false as string);
    return { line, sig, text: req.text, req, outcome: expect.answer ? 1 : 0 };
  }
  if (cap === 'classify') {
    const sig = classifySignature(labelsOf(req.labels as string[] | Record<string, string>));
    const outcome = sig.outcomes.indexOf(expect.label as string);
    if (outcome < 0) throw bad(`expect.label: ${JSON.stringify(expect.label)} is not one of req.labels`);
    return { line, sig, text: req.text, req, outcome };
  }
  if (cap === 'classify-tree') {
    const path = treePath(req.tree as Tree, expect.path, bad);
    const sig = treeSignature(req.tree as Tree);
    return { line, sig, text: req.text, req, outcome: sig.outcomes.indexOf(JSON.stringify(path)) };
  }
  if (cap === 'verify') {
    if (typeof expect.matches !== 'boolean') throw bad('expect.matches: true or false');
    const field = req.field as { name: string; description?: string };
    const sig = verifySignature(field.name, field.description);
    return { line, sig, text: req.text, req, value: String(req.value), outcome: expect.matches ? 1 : 0 };
  }
  const scale = req.scale as string[];
  const level = expect.level;
  if (!Number.isInteger(level) || (level as number) < 0 || (level as number) >= scale.length) {
    throw bad(`expect.level: an integer from 0 to ${scale.length - 1}`);
  }
  return { line, sig: rateSignature(scale), text: req.text, req, outcome: level as number };
}

/** expect.path checked against the tree: labels from the top to a leaf, as the route answers. */
function treePath(tree: Tree, path: unknown, bad: (msg: string) => Error): string[] {
  if (!Array.isArray(path) || path.length === 0 || !path.every((p) => typeof p === 'string')) {
    throw bad('expect.path: a list of labels from the top of req.tree to a leaf');
  }
  let level: Tree | undefined = tree;
  for (const [i, name] of (path as string[]).entries()) {
    if (!level) throw bad(`expect.path: ${JSON.stringify(path[i - 1])} is a leaf; the path ends there`);
    if (!Object.hasOwn(level, name)) {
      const where = i === 0 ? 'the top of req.tree' : JSON.stringify(path[i - 1]);
      throw bad(`expect.path: ${JSON.stringify(name)} is not a label under ${where}`);
    }
    level = childrenOf(level[name]);
  }
  if (level)
    throw bad(`expect.path: ends at ${JSON.stringify(path.at(-1))}, which has labels under it (a path runs to a leaf)`);
  return path as string[];
}

/** Reads, fits and (with a store) stores one head per signature of `examples`. */
export async function fitHeads(engine: Engine, examples: LabelledLine[], opts: FitOptions): Promise<SignatureReport[]> {
  const groups = new Map<string, LabelledLine[]>();
  for (const e of examples) groups.set(e.sig.id, [...(groups.get(e.sig.id) ?? []), e]);
  const reader = new HeadReader(engine);
  const route = new DecisionSet(engine); // the decisions as shipped: no heads
  const progress = opts.progress && new Progress('reading', examples.length, opts.progress, 'none', 'items');
  let done = 0;
  const reports: SignatureReport[] = [];
  for (const group of groups.values()) {
    const started = performance.now();
    const read: Example[] = [];
    if (fittable(group)) {
      for (let i = 0; i < group.length; i += CHUNK) {
        const chunk = group.slice(i, i + CHUNK);
        const session = engine.admit(); // each chunk read in an admission of its own
        try {
          read.push(...(await readExamples(reader, chunk, session)));
        } finally {
          session.close();
        }
        progress?.update((done += chunk.length));
      }
    } else {
      progress?.update((done += group.length));
    }
    const check = (predictions: number[]) =>
      againstRoute(route, group, predictions, opts.seed ?? 1, opts.routeSeconds ?? ROUTE_SECONDS);
    reports.push(await fitSignature(group, read, check, opts, started));
  }
  progress?.finish();
  return reports;
}

/** Whether a signature's examples are enough to fit a head on: MIN_EXAMPLES, of 2 outcomes at least. */
function fittable(group: LabelledLine[]): boolean {
  return group.length >= MIN_EXAMPLES && new Set(group.map((e) => e.outcome)).size >= 2;
}

/** Examples of one signature (at most CHUNK: one job round) read in `session` as their head reads them. */
export async function readExamples(reader: HeadReader, chunk: LabelledLine[], session: Session): Promise<Example[]> {
  const sig = chunk[0]!.sig;
  const values = sig.definition.capability === 'verify' ? chunk.map((e) => e.value!) : undefined;
  const { readings } = await reader.read(
    sig,
    chunk.map((e) => e.text),
    session,
    values,
  );
  return readings.map((r, k) => ({ ...r, label: chunk[k]!.outcome }));
}

/** How the route (the shipped zero-shot decision) did on some examples, against the head's choices there. */
export interface RouteCheck {
  examples: number;
  route: number;
  head: number;
}

/**
 * Fits one signature's head on its examples as read (`read`, in `group`'s order), checks it against
 * the route (`check` is handed each example's cross-validated choice), and stores it if it wins.
 */
export async function fitSignature(
  group: LabelledLine[],
  read: Example[],
  check: (predictions: number[]) => Promise<RouteCheck | undefined>,
  opts: FitOptions,
  started = performance.now(),
): Promise<SignatureReport> {
  const sig = group[0]!.sig;
  const organization = opts.organization ?? '';
  const report: SignatureReport = {
    id: headId(sig, organization),
    capability: sig.definition.capability,
    description: describeDefinition(sig.definition),
    examples: group.length,
    outcomes: sig.outcomes.length,
    zeroShot: null,
    fitted: null,
    route: null,
    routeExamples: 0,
    strength: null,
    stored: false,
    seconds: 0,
    note: '',
  };
  const finish = () => ((report.seconds = (performance.now() - started) / 1000), report);
  if (!fittable(group)) {
    const seen = new Set(group.map((e) => e.outcome)).size;
    report.note = `too few examples to fit: ${group.length}, of ${seen} outcome(s) (at least ${MIN_EXAMPLES}, of 2 outcomes)`;
    return finish();
  }
  const { chosen, params } = await learn(read, sig.outcomes.length, opts.folds ?? 4, opts.seed ?? 1);
  report.zeroShot = chosen.zeroShot;
  report.fitted = chosen.accuracy;
  report.strength = chosen.strength;
  if (chosen.strength === null) {
    report.note = 'the zero-shot reading was as good: nothing stored';
    return finish();
  }
  const checked = await check(chosen.predictions);
  if (checked) {
    report.route = checked.route / checked.examples;
    report.routeExamples = checked.examples;
  }
  if (checked && checked.route > checked.head) {
    report.note = `the route was right on ${checked.route} of ${checked.examples} examples, the head on ${checked.head}: nothing stored`;
    return finish();
  }
  const meta: HeadMeta = {
    outcomes: sig.outcomes,
    dim: params!.dim,
    strength: chosen.strength,
    reading: READING_VERSION,
    report: {
      zero_shot_cv_accuracy: chosen.zeroShot,
      fitted_cv_accuracy: chosen.accuracy,
      ...(checked ? { route_accuracy: checked.route / checked.examples, route_examples: checked.examples } : {}),
      folds: chosen.folds,
      seconds: Number(finish().seconds.toFixed(1)),
    },
  };
  if (opts.store) {
    await opts.store.saveHead({
      id: report.id,
      organization,
      capability: sig.definition.capability,
      signature: sig.key,
      model: opts.model,
      createdAt: new Date().toISOString(),
      examples: group.length,
      meta: JSON.stringify(meta),
      weights: encodeParams(params!),
    });
    report.stored = true;
  }
  return finish();
}

/**
 * The route (the shipped zero-shot decision) asked the examples of a stratified seeded sample, one
 * at a time, until `seconds` have passed or ROUTE_MAX were asked; how many of those the route and
 * the head's cross-validated choices (`predictions`, in `group`'s order) got right.
 */
async function againstRoute(
  route: DecisionSet,
  group: LabelledLine[],
  predictions: number[],
  seed: number,
  seconds: number,
): Promise<RouteCheck | undefined> {
  if (seconds <= 0) return undefined;
  const order = stratifiedOrder(
    group.map((e) => e.outcome),
    seed,
  );
  const bound = CAPABILITIES.find((c) => c.name === group[0]!.sig.definition.capability)!.bind(route);
  const until = performance.now() + seconds * 1000;
  const tally = { examples: 0, route: 0, head: 0 };
  for (const i of order.slice(0, ROUTE_MAX)) {
    if (tally.examples > 0 && performance.now() > until) break;
    const e = group[i]!;
    const session = route.engine.admit();
    let body: unknown;
    try {
      body = (await bound.decision.run(e.req, session)).body;
    } finally {
      session.close();
    }
    tally.examples++;
    tally.route += routeOutcome(e.sig, body) === e.outcome ? 1 : 0;
    tally.head += predictions[i] === e.outcome ? 1 : 0;
  }
  return tally;
}

/** The outcome a route's response body chose, in the signature's outcome order. */
export function routeOutcome(sig: Signature, body: unknown): number {
  const r = body as { answer?: boolean; matches?: boolean; label?: string; path?: string[]; level?: number };
  switch (sig.definition.capability) {
    case 'yes-no':
      return r.answer ? 1 : 0;
    case 'verify':
      return r.matches ? 1 : 0;
    case 'classify':
      return sig.outcomes.indexOf(r.label!);
    case 'classify-tree':
      return sig.outcomes.indexOf(JSON.stringify(r.path));
    case 'rate':
      return r.level!;
  }
}

/** Indices dealt round the outcomes in a seeded shuffle: every prefix is close to stratified. */
function stratifiedOrder(labels: number[], seed: number): number[] {
  const random = uniform(seed);
  const byLabel = new Map<number, number[]>();
  labels.forEach((l, i) => byLabel.set(l, [...(byLabel.get(l) ?? []), i]));
  const queues = [...byLabel.values()].map((members) => shuffleInPlace(members, random));
  const order: number[] = [];
  for (let round = 0; order.length < labels.length; round++) {
    for (const q of queues) if (round < q.length) order.push(q[round]!);
  }
  return order;
}
