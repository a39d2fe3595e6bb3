// `decision-machine bench` arguments -> a Plan: every setting a comma list (the sweep measures
// their cross product), checked before anything is loaded. A bad argument throws a UsageError
// naming its flag; the command prints it and exits 2.
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MAX_DECISIONS, MAX_ITEMS } from '../api/common.js';
import type { Stop } from './load.js';
import { readRequests, type FileRequest } from './texts.js';
import { DEFAULT_QUESTIONS, usesOf, WORKLOADS, type Workload } from './workloads.js';

export const BENCH_USAGE = `usage: decision-machine bench [options]   (every setting takes a comma list; the sweep is their cross product)
  --capabilities LIST   ${WORKLOADS.join(', ')} (default yes-no)
  --slots LIST          inference slots (default DM_SLOTS)
  --threads LIST        CPU threads per slot (default DM_THREADS)
  --concurrency LIST    clients with a request in flight (default 1)
  --batch LIST          texts per call (default 1)
  --questions LIST      statements / questions / fields / types / System One questions per call
                        (default per capability: yes-no 1, answer 1, extract 5, entities 3, systemone 12)
  --text-chars LIST     characters per text (default 300)
  --labels LIST         labels (classify), tree groups (classify-tree), levels (rate), options (systemone), tools (chat) (default 5)
  --requests N | --duration S   per repetition (default --requests 16)
  --warmup N            requests before each row, not measured (default 4)
  --repetitions N       measured runs of each row; figures are their mean ± sd (default 3)
  --seed N              seed of the generated texts (default: a new one each run, written in the output)
  --reuse               repeat 8 texts per row instead of a new text for every request
  --texts FILE          send the requests of FILE (JSONL of {"cap", "req"}) instead of generated ones
  --output md|json|csv|jsonl   stdout's format (default md)
  --from FILE           measure nothing: write the sweep FILE holds (from --output json) as --output, --svg, --recommend ask
  --svg FILE            decisions/s against p99 latency per configuration
  --url URL             measure a running deployment (key from DM_KEY) instead of an in-process engine
  --pid PID             with --url: the deployment's process, for its CPU and memory
  --peer llama-server   llama.cpp's server on the same model file and settings, beside the service
  --recommend --p99-ms MS   the settings with the most decisions/s at p99 <= MS, as environment variables`;

export class UsageError extends Error {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(`${flag}: ${message}`);
  }
}

export type Output = 'md' | 'json' | 'csv' | 'jsonl';

export interface Plan {
  workloads: Workload[];
  /** Empty with --url: the deployment's own. */
  slots: number[];
  threads: number[];
  concurrency: number[];
  batch: number[];
  /** Absent: each workload's DEFAULT_QUESTIONS. */
  questions?: number[];
  textChars: number[];
  labels: number[];
  stop: Stop;
  warmup: number;
  repetitions: number;
  seed: number;
  reuse: boolean;
  /** The requests of --texts FILE, sent as written. */
  requests?: FileRequest[];
  output: Output;
  /** --from: a sweep written before (--output json), to write out again instead of measuring. */
  from?: string;
  svg?: string;
  url?: string;
  pid?: number;
  peer: boolean;
  /** --recommend: the p99 bound, ms. */
  p99Ms?: number;
}

const OPTIONS = {
  capabilities: { type: 'string' },
  slots: { type: 'string' },
  threads: { type: 'string' },
  concurrency: { type: 'string' },
  batch: { type: 'string' },
  questions: { type: 'string' },
  'text-chars': { type: 'string' },
  labels: { type: 'string' },
  requests: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  repetitions: { type: 'string' },
  seed: { type: 'string' },
  reuse: { type: 'boolean' },
  texts: { type: 'string' },
  output: { type: 'string' },
  from: { type: 'string' },
  svg: { type: 'string' },
  url: { type: 'string' },
  pid: { type: 'string' },
  peer: { type: 'string' },
  recommend: { type: 'boolean' },
  'p99-ms': { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** The plan of `args`; `defaults` are the configured slots and threads. Throws UsageError. */
export function parsePlan(args: string[], defaults: { slots: number; threads: number }): Plan | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    // Node names the option: "Unknown option '--x'", "Option '--slots <value>' argument missing".
    const flag = /'(--?[\w-]+)/.exec((err as Error).message)?.[1] ?? 'arguments';
    throw new UsageError(flag, (err as Error).message);
  }
  if (values.help) return 'help';
  const str = (name: keyof typeof OPTIONS) => values[name] as string | undefined;
  if (values.from !== undefined) {
    const measuring = Object.keys(values).find((k) => !['from', 'output', 'svg', 'recommend', 'p99-ms'].includes(k));
    if (measuring) throw new UsageError(`--${measuring}`, 'measures a sweep; --from writes one measured before');
  }
  const ints = (name: keyof typeof OPTIONS, min: number, max: number, fallback?: number[]) =>
    str(name) === undefined ? fallback : intList(`--${name}`, str(name)!, min, max);
  const one = (name: keyof typeof OPTIONS, min: number, fallback: number) => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min)
      throw new UsageError(
        `--${name}`,
        `${JSON.stringify(raw)} is not ${min > 0 ? 'a positive' : 'a non-negative'} integer`,
      );
    return Number(raw);
  };

  const url = str('url');
  if (url !== undefined && !/^https?:\/\/[^/]+/.test(url))
    throw new UsageError('--url', `${JSON.stringify(url)} is not an http:// or https:// address`);
  if (url !== undefined)
    for (const flag of ['slots', 'threads'] as const)
      if (str(flag) !== undefined)
        throw new UsageError(`--${flag}`, `is the deployment's own with --url (DM_${flag.toUpperCase()})`);
  if (str('pid') !== undefined && url === undefined) throw new UsageError('--pid', 'only with --url');
  const peer = str('peer');
  if (peer !== undefined && peer !== 'llama-server')
    throw new UsageError('--peer', `${JSON.stringify(peer)}: the one peer is llama-server`);
  if (peer !== undefined && url !== undefined)
    throw new UsageError('--peer', 'runs beside the in-process engine, not with --url');

  let requests: FileRequest[] | undefined;
  const file = str('texts');
  if (file !== undefined) {
    for (const flag of ['batch', 'questions', 'labels', 'text-chars', 'reuse'] as const)
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag}`, "does not apply with --texts: the file's requests are sent as written");
    try {
      requests = readRequests(file);
    } catch (err) {
      throw new UsageError('--texts', (err as Error).message);
    }
    const unknown = requests.find((r) => !(WORKLOADS as readonly string[]).includes(r.cap));
    if (unknown) throw new UsageError('--texts', `unknown capability ${JSON.stringify(unknown.cap)} in ${file}`);
  }

  const fromFile = requests && ([...new Set(requests.map((r) => r.cap))] as Workload[]);
  const workloads = str('capabilities') === undefined ? (fromFile ?? ['yes-no']) : capabilityList(str('capabilities')!);
  if (fromFile) {
    const missing = workloads.find((w) => !fromFile.includes(w));
    if (missing) throw new UsageError('--capabilities', `${missing} has no request in ${file}`);
  }
  if (peer !== undefined && !workloads.some((w) => w === 'yes-no' || w === 'classify'))
    throw new UsageError('--peer', 'llama-server is compared on yes-no and classify only');

  if (str('requests') !== undefined && str('duration') !== undefined)
    throw new UsageError('--duration', 'give --requests or --duration, not both');
  const duration = str('duration');
  if (duration !== undefined && !(/^\d+(\.\d+)?$/.test(duration) && Number(duration) > 0))
    throw new UsageError('--duration', `${JSON.stringify(duration)} is not a positive number of seconds`);

  const output = (str('output') ?? 'md') as Output;
  if (!['md', 'json', 'csv', 'jsonl'].includes(output))
    throw new UsageError('--output', `${JSON.stringify(output)}: md, json, csv or jsonl`);
  if (values['p99-ms'] !== undefined && !values.recommend) throw new UsageError('--p99-ms', 'only with --recommend');
  if (values.recommend && values['p99-ms'] === undefined)
    throw new UsageError('--recommend', 'needs --p99-ms MS, the p99 bound');

  const plan: Plan = {
    workloads,
    slots: url ? [] : ints('slots', 1, 64, [defaults.slots])!,
    threads: url ? [] : ints('threads', 1, 256, [defaults.threads])!,
    concurrency: ints('concurrency', 1, 1024, [1])!,
    batch: ints('batch', 1, MAX_ITEMS, [1])!,
    questions: ints('questions', 1, MAX_ITEMS),
    textChars: ints('text-chars', 1, 20_000, [300])!,
    labels: ints('labels', 2, 64, [5])!,
    stop: duration !== undefined ? { seconds: Number(duration) } : { requests: one('requests', 1, 16) },
    warmup: one('warmup', 0, 4),
    repetitions: one('repetitions', 1, 3),
    // A new seed each run: a deployment's prompt cache still holds the texts of the last run.
    seed: one('seed', 0, randomInt(2 ** 31)),
    reuse: values.reuse === true,
    requests,
    output,
    from: str('from'),
    svg: str('svg'),
    url: url?.replace(/\/+$/, ''),
    pid: str('pid') === undefined ? undefined : one('pid', 1, 0),
    peer: peer !== undefined,
    p99Ms: values.recommend ? one('p99-ms', 1, 0) : undefined,
  };
  if (workloads.includes('rate') && plan.labels.some((n) => n > 10))
    throw new UsageError('--labels', 'rate takes 2 to 10 levels');
  const perText = Math.max(...(plan.questions ?? [1]));
  if (workloads.some((w) => w === 'yes-no' || w === 'answer') && Math.max(...plan.batch) * perText > MAX_DECISIONS)
    throw new UsageError('--questions', `--batch x --questions is more than ${MAX_DECISIONS} decisions per request`);
  return plan;
}

/** A comma list of integers in [min, max]; throws naming `flag`. */
function intList(flag: string, raw: string, min: number, max: number): number[] {
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => !/^-?\d+$/.test(s)))
    throw new UsageError(flag, `${JSON.stringify(raw)} is not a comma list of integers`);
  const numbers = items.map(Number);
  const bad = numbers.find((n) => n < min || n > max);
  if (bad !== undefined) throw new UsageError(flag, `${bad} is outside ${min} to ${max}`);
  return [...new Set(numbers)];
}

function capabilityList(raw: string): Workload[] {
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError('--capabilities', `${JSON.stringify(raw)} is not a comma list`);
  const unknown = items.find((s) => !(WORKLOADS as readonly string[]).includes(s));
  if (unknown !== undefined)
    throw new UsageError('--capabilities', `unknown capability ${JSON.stringify(unknown)} (${WORKLOADS.join(', ')})`);
  return [...new Set(items)] as Workload[];
}

/** A row's settings; null where a setting does not apply to it. */
export interface Setting {
  engine: 'decision-machine' | 'llama-server';
  capability: Workload;
  slots: number | null;
  threads: number | null;
  concurrency: number;
  batch: number | null;
  questions: number | null;
  textChars: number | null;
  labels: number | null;
}

/** The rows measured on one engine of `slots` x `threads`: the cross product of the rest. */
export function settingsOf(plan: Plan, slots: number | null, threads: number | null): Omit<Setting, 'engine'>[] {
  const out: Omit<Setting, 'engine'>[] = [];
  for (const capability of plan.workloads) {
    const uses = usesOf(capability);
    const file = plan.requests !== undefined;
    const batches = uses.batch && !file ? plan.batch : [null];
    const questions = uses.questions && !file ? (plan.questions ?? [DEFAULT_QUESTIONS[capability]!]) : [null];
    const labels = uses.labels && !file ? plan.labels : [null];
    const chars = file ? [null] : plan.textChars;
    for (const concurrency of plan.concurrency)
      for (const batch of batches)
        for (const q of questions)
          for (const textChars of chars)
            for (const l of labels)
              out.push({ capability, slots, threads, concurrency, batch, questions: q, textChars, labels: l });
  }
  return out;
}
