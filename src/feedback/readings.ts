// A correction read once, when it arrives: what its head reads of the text (src/heads/reading.ts)
// and what the shipped decision (no head) answers, kept beside it in the store, so that a refit
// only fits. Read on the engine's background slots (Engine.background): never a request's slot.
// A reading is bound to the model and the reading version that made it; a refit reads again
// the corrections whose reading is another's (or missing: a kill -9 between store and read).
import { DecisionSet, CAPABILITIES } from '../decisions/capabilities.js';
import { READING_VERSION } from '../decisions/reading.js';
import type { Engine, Session } from '../engine/engine.js';
import { readExamples, routeOutcome, type LabelledLine } from '../heads/fit.js';
import { HeadReader } from '../heads/reading.js';
import type { CorrectionReading } from '../store/store.js';

export class Readings {
  private readonly reader: HeadReader;
  private readonly route: DecisionSet;

  constructor(private readonly engine: Engine) {
    this.reader = new HeadReader(engine);
    this.route = new DecisionSet(engine); // the decisions as shipped: no heads
  }

  /** What a reading made now is bound to: the model's SHA-256 and the reading's version. */
  static bound(model: string): string {
    return `${model}:${READING_VERSION}`;
  }

  /**
   * Reads one corrected example. `routeAnswer`: what the shipped decision answered it (a kept
   * decision no head made), in expect's form; without it the route is asked.
   */
  async read(example: LabelledLine, model: string, routeAnswer?: Record<string, unknown>): Promise<CorrectionReading> {
    const session = this.engine.background();
    try {
      const [read] = await readExamples(this.reader, [example], session);
      const answered = routeAnswer ?? (await this.ask(example, session));
      return {
        model: Readings.bound(model),
        hidden: read!.hidden,
        base: read!.base,
        route: routeOutcome(example.sig, answered),
      };
    } finally {
      session.close();
    }
  }

  private async ask(example: LabelledLine, session: Session): Promise<unknown> {
    const capability = CAPABILITIES.find((c) => c.name === example.sig.definition.capability)!;
    return (await capability.bind(this.route).decision.run(example.req, session)).body;
  }
}
