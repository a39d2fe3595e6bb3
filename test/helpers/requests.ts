// Model work in tests as the routes run it: each call is one request admitted on the engine
// (Engine.admit), the decision or the round run in its Session, the Session closed once answered.
import type { ScoreJob, ScoreResult, SpanJob, SpanResult } from '../../src/binding.js';
import type { Engine, Session } from '../../src/engine/engine.js';

/** `work` run in one admitted request's Session, closed once it is answered or has thrown. */
async function admitted<T>(
  engine: Engine,
  signal: AbortSignal | undefined,
  work: (s: Session) => Promise<T>,
): Promise<T> {
  const session = engine.admit({ signal });
  try {
    return await work(session);
  } finally {
    session.close();
  }
}

/** `decision` run on `input` as one admitted request. */
export function decide<I, O>(
  engine: Engine,
  decision: { run(input: I, session: Session): Promise<O> },
  input: I,
  signal?: AbortSignal,
): Promise<O> {
  return admitted(engine, signal, (s) => decision.run(input, s));
}

/** One round of score jobs as one admitted request. */
export function scoreRound(engine: Engine, jobs: ScoreJob[], signal?: AbortSignal): Promise<ScoreResult[]> {
  return admitted(engine, signal, (s) => s.score(jobs));
}

/** One round of span jobs as one admitted request. */
export function spanRound(engine: Engine, jobs: SpanJob[], signal?: AbortSignal): Promise<SpanResult[]> {
  return admitted(engine, signal, (s) => s.spans(jobs));
}
