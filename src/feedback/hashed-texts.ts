// A deployment that must not store texts (DM_FEEDBACK_TEXTS=hash) keeps each kept decision and
// correction as its fit line without the text, with the text's SHA-256 (`text_sha256`) in its
// place, and what the model read of the text (readings.ts), read once while the text is still in
// memory. Such a line can be corrected and fitted on, never read again: under another model (or
// reading version) its correction is left out of refits.
import { createHash } from 'node:crypto';
import { readLine, type LabelledLine } from '../heads/fit.js';

/** A fit line (as JSON) with its text replaced by the text's SHA-256. */
export function withoutText(line: string): string {
  const { req, ...rest } = JSON.parse(line) as { req: Record<string, unknown> };
  const { text, ...kept } = req;
  if (typeof text !== 'string') return line;
  return JSON.stringify({ ...rest, req: kept, text_sha256: createHash('sha256').update(text).digest('hex') });
}

/** A kept line, parsed as readLine parses it; a hashed one has the text '' and its `textSha256`. */
export function readKeptLine(value: Record<string, unknown>): LabelledLine {
  const { text_sha256: textSha256, ...line } = value;
  if (typeof textSha256 !== 'string') return readLine(value);
  // The request was validated with its text when it was decided; any text stands in for it here.
  const read = readLine({ ...line, req: { ...(line.req as Record<string, unknown>), text: '-' } });
  const req = { ...read.req };
  delete req.text;
  return { ...read, text: '', req, textSha256 };
}
