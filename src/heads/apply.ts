// Heads as the decisions apply them (the decisions' HeadDecider): a request whose signature has a head
// is read the head's way (src/heads/reading.ts) and decided by it; the response keeps its shape and
// names the head.
import type { Engine, Session } from '../engine/engine.js';
import type { Definition, HeadDecider } from '../decisions/head-decider.js';
import type { Heads } from './heads.js';
import { normalise } from '../decisions/distribution.js';
import { headScores } from './logistic.js';
import { HeadReader } from './reading.js';
import { signatureOf } from './signature.js';

export class StoreHeadDecider implements HeadDecider {
  private readonly reader: HeadReader;

  constructor(
    engine: Engine,
    private readonly heads: Heads,
  ) {
    this.reader = new HeadReader(engine);
  }

  async decide(definition: Definition, texts: string[], session: Session, values?: string[]) {
    const sig = signatureOf(definition);
    const head = this.heads.find(sig, session.organization);
    if (!head) return undefined;
    const { readings, promptTokens, decodeMs } = await this.reader.read(sig, texts, session, values);
    return {
      // x-decision-head: a deployment head by its id; an organization's says whose it is.
      head: head.organization ? `${head.id}; organization=${head.organization}` : head.id,
      outcomes: sig.outcomes,
      probabilities: readings.map((r) => normalise(headScores(head.params, r.hidden, r.base))),
      promptTokens,
      decodeMs,
    };
  }
}
