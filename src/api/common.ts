// Schemas shared by every capability endpoint. The same objects validate requests and produce
// /openapi.json, so the document cannot drift from the code.
import { Type } from '@sinclair/typebox';

export const MAX_TEXT = 20000;
export const MAX_ITEMS = 32;

export const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'the text to decide about' });

export const TextFields = {
  text: Type.Optional(Text),
  texts: Type.Optional(
    Type.Array(Text, { minItems: 1, maxItems: MAX_ITEMS, description: 'a batch: one result per text, in order' }),
  ),
};

export const Probability = Type.Number({ minimum: 0, maximum: 1 });

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }) },
  { $id: 'Error' },
);
