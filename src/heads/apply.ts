// Heads as the decisions apply them: a request whose signature has a head is read the head's way
// (src/heads/reading.ts) and decided by it; the response keeps its shape and names the head.
import type { ScoreJob, ScoreResult } from '../binding.js';
import type { Engine } from '../engine/engine.js';
import type { Head, Heads } from './heads.js';
import { headScores, softmax } from './logistic.js';
import { HeadReader } from './reading.js';
import type { Signature } from './signature.js';

export class HeadDecisions {
  private readonly reader: HeadReader;

  constructor(
    engine: Engine,
    private readonly heads: Heads,
  ) {
    this.reader = new HeadReader(engine);
  }

  find(sig: Signature): Head | undefined {
    return this.heads.find(sig);
  }

  /** Each text's probabilities over the signature's outcomes (sig.outcomes order), by `head`. */
  async decide(
    sig: Signature,
    head: Head,
    texts: string[],
    score: (jobs: ScoreJob[]) => Promise<ScoreResult[]>,
  ): Promise<{ probabilities: number[][]; promptTokens: number }> {
    const { readings, promptTokens } = await this.reader.read(sig, texts, score);
    return {
      probabilities: readings.map((r) => softmax(headScores(head.params, r.hidden, r.base))),
      promptTokens,
    };
  }
}
