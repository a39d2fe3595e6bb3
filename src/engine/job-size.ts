// How big a native job is: the context it needs in one slot (checkFits) and the tokens it has the
// model read (tokensOf), which a request's budget counts (src/engine/session.ts).
import type { NativeJob } from '../binding.js';
import { ERRORS } from '../errors.js';

type SpansJob = NativeJob & { kind: 'spans' };

/**
 * Throws a 400 when `job` does not fit in a slot of `contextSize` tokens. A job's branches live in
 * the KV cache together with its prefix; a span job runs its branches in groups that fit
 * (span_kernel.cpp): one branch with the longest answer it may copy must fit alone.
 */
export function checkFits(job: NativeJob, contextSize: number): void {
  let need = job.prefix.length;
  if (job.kind === 'score') {
    for (const b of job.branches) need += b.length;
    for (const o of job.options) need += job.branches.length * (o.length - 1);
  } else {
    need += Math.max(...job.branches.map((b, i) => b.length + longestAnswer(job, i)));
  }
  if (need > contextSize) {
    throw ERRORS.invalidRequest(
      `body: the request needs ${need} tokens of context but a slot holds ${contextSize}; send shorter texts or fewer statements`,
    );
  }
}

/** The most tokens one span of branch i may take (its own limit, or the job's). */
function spanTokensOf(job: SpansJob, i: number): number {
  return job.branchMaxSpanTokens?.[i] ?? job.maxSpanTokens;
}

/** The most tokens branch i of a span job may write: its spans, each closed by one token. */
function longestAnswer(job: SpansJob, i: number): number {
  return (job.branchMaxSpans?.[i] ?? job.maxSpans) * (spanTokensOf(job, i) + 1);
}

/**
 * The tokens a round has the model read: each job's prefix past what it shares with the first
 * (a slot keeps a common system prompt cached), its branches, every option of a score job after
 * each branch, and one span answer per branch of a span job. Linear in the jobs' sizes.
 */
export function tokensOf(jobs: NativeJob[]): number {
  const first = jobs[0]?.prefix;
  let tokens = 0;
  for (const job of jobs) {
    let shared = 0;
    if (job !== jobs[0])
      while (shared < job.prefix.length && shared < first!.length && job.prefix[shared] === first![shared]) shared++;
    tokens += job.prefix.length - shared;
    for (const b of job.branches) tokens += b.length;
    if (job.kind === 'score') for (const o of job.options) tokens += job.branches.length * o.length;
    else job.branches.forEach((_, i) => (tokens += spanTokensOf(job, i) + 1));
  }
  return tokens;
}
