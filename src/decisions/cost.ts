// What a decision's readings cost on the model: the prompt tokens read (billed as input tokens)
// and the time spent decoding. A label set's or scale's cached prior is not part of it.
export interface Cost {
  promptTokens: number;
  decodeMs: number;
}

/** What the given readings cost together; a reading not asked (undefined) costs nothing. */
export function costOf(...readings: (Cost | undefined)[]): Cost {
  return {
    promptTokens: promptTokensOf(readings.filter((r) => r !== undefined)),
    decodeMs: readings.reduce((n, r) => n + (r?.decodeMs ?? 0), 0),
  };
}

/** The prompt tokens the given readings read together: what a request is billed for as input. */
export function promptTokensOf(readings: readonly { promptTokens: number }[]): number {
  return readings.reduce((n, r) => n + r.promptTokens, 0);
}
