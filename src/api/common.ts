// Schemas shared by every capability endpoint. The same objects validate requests and produce
// /openapi.json, so the document cannot drift from the code.
import { Type, type Static } from '@sinclair/typebox';
import { ERRORS } from '../errors.js';

export const MAX_TEXT = 20000;
export const MAX_ITEMS = 32;
/** Decisions in one request: texts x statements (yes-no) or texts x questions (answer). */
export const MAX_DECISIONS = 256;

/** Refuses a request whose lists multiply past MAX_DECISIONS, before any work on them. */
export function checkDecisions(body: { texts?: unknown[]; statements?: unknown[]; questions?: unknown[] }): void {
  const texts = body.texts?.length ?? 1;
  const asked = body.statements?.length ?? body.questions?.length ?? 1;
  if (texts * asked > MAX_DECISIONS) {
    const what = body.statements ? 'statements' : 'questions';
    throw ERRORS.invalidRequest(
      `body: texts x ${what} is ${texts * asked} decisions, more than the limit of ${MAX_DECISIONS} per request`,
    );
  }
}

const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'the text to decide about' });

export const TextFields = {
  text: Type.Optional(Text),
  texts: Type.Optional(
    Type.Array(Text, { minItems: 1, maxItems: MAX_ITEMS, description: 'a batch: one result per text, in order' }),
  ),
};

const TextInput = Type.Object(TextFields);
/** The text / texts pair every capability's request has. */
export type TextInput = Static<typeof TextInput>;

export const Probability = Type.Number({ minimum: 0, maximum: 1 });

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }) },
  { $id: 'Error' },
);
