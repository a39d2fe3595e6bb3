// Model work in tests as the routes run it: each call is one request admitted on the engine
// (Engine.admit), whose Session the decision or the round runs in.
import type { ScoreJob, ScoreResult, SpanJob, SpanResult } from '../../src/binding.js';
import type { Engine, Session } from '../../src/engine/engine.js';

/** `decision` run on `input` as one admitted request. */
export function decide<I, O>(
  engine: Engine,
  decision: { run(input: I, session: Session): Promise<O> },
  input: I,
  signal?: AbortSignal,
): Promise<O> {
  return engine.admit((session) => decision.run(input, session), { signal });
}

/** One round of score jobs as one admitted request. */
export function scoreRound(engine: Engine, jobs: ScoreJob[], signal?: AbortSignal): Promise<ScoreResult[]> {
  return engine.admit((session) => session.score(jobs), { signal });
}

/** One round of span jobs as one admitted request. */
export function spanRound(engine: Engine, jobs: SpanJob[], signal?: AbortSignal): Promise<SpanResult[]> {
  return engine.admit((session) => session.spans(jobs), { signal });
}
