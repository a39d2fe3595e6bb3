// Model work in tests as the routes run it: each call is one request admitted on the engine
// (Engine.admit), the decision or the round run in its Session, the Session closed once answered.
import type { ScoreJob, ScoreResult, SpanJob, SpanResult } from '../../src/binding.js';
import type { Engine, Session } from '../../src/engine/engine.js';

/** `decision` run on `input` as one admitted request. */
export async function decide<I, O>(
  engine: Engine,
  decision: { run(input: I, session: Session): Promise<O> },
  input: I,
  signal?: AbortSignal,
): Promise<O> {
  const session = engine.admit({ signal });
  try {
    return await decision.run(input, session);
  } finally {
    session.close();
  }
}

/** One round of score jobs as one admitted request. */
export async function scoreRound(engine: Engine, jobs: ScoreJob[], signal?: AbortSignal): Promise<ScoreResult[]> {
  const session = engine.admit({ signal });
  try {
    return await session.score(jobs);
  } finally {
    session.close();
  }
}

/** One round of span jobs as one admitted request. */
export async function spanRound(engine: Engine, jobs: SpanJob[], signal?: AbortSignal): Promise<SpanResult[]> {
  const session = engine.admit({ signal });
  try {
    return await session.spans(jobs);
  } finally {
    session.close();
  }
}
