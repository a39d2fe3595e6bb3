// How near a text's meaning is to each of several groups of short texts, by the sentence encoder:
// for each group, the best cosine between the text and any member. Label texts are embedded once
// and kept (a tree's labels come back with every request).
import type { Engine, Session } from '../engine/engine.js';
import { dot } from '../engine/vectors.js';

const CACHED_VECTORS = 8192;

export class Similarity {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(private readonly engine: Engine) {}

  get available(): boolean {
    return this.engine.canEmbed;
  }

  /**
   * For each group, the highest cosine similarity between `text` and a member (-1 for an empty
   * group), embedded in the request's `session`.
   */
  async best(session: Session, text: string, groups: string[][]): Promise<number[]> {
    const known = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const t of new Set(groups.flat())) {
      const v = this.vectors.get(t);
      if (v) known.set(t, v);
      else missing.push(t);
    }
    const [query, ...rows] = await session.embed([text, ...missing]);
    missing.forEach((t, i) => {
      const v = Float32Array.from(rows[i]!); // a copy: the row is a view of the whole batch
      known.set(t, v);
      this.vectors.set(t, v);
      if (this.vectors.size > CACHED_VECTORS) this.vectors.delete(this.vectors.keys().next().value!);
    });
    return groups.map((group) => group.reduce((best, t) => Math.max(best, dot(query!, known.get(t)!)), -1));
  }
}
