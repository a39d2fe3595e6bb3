// The text / texts rule shared by every capability but yes-no.
import { ERRORS } from '../errors.js';
import type { TextInput } from '../api/common.js';

/** Exactly one of text and texts; returns the texts and whether the caller asked for a list. */
export function textsOf(input: TextInput): { texts: string[]; list: boolean } {
  if ((input.text === undefined) === (input.texts === undefined)) {
    throw ERRORS.invalidRequest('provide text or texts, not both');
  }
  return input.texts !== undefined ? { texts: input.texts, list: true } : { texts: [input.text!], list: false };
}

/** `text` gives one result, `texts` gives `{ results }` in input order. */
export function shaped<T>(results: T[], list: boolean): T | { results: T[] } {
  return list ? { results } : results[0]!;
}
