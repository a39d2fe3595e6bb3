/** A decision's response body plus what the call is billed for (sent as x-input-* headers). */
export interface BilledBody<T> {
  body: T;
  inputChars: number; // characters of every user-supplied string that reached the model
  inputTokens: number; // prompt tokens the model read: instructions, texts and statements
  heads?: string[]; // the fitted heads that decided (src/heads), sent as x-decision-head
}

export function charsOf(...values: (string | string[] | undefined)[]): number {
  let n = 0;
  for (const v of values) {
    if (typeof v === 'string') n += v.length;
    else if (v) for (const s of v) n += s.length;
  }
  return n;
}
