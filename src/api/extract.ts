import { Type } from '@sinclair/typebox';
import { TextFields } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

export const ExtractRequest = Type.Object(
  {
    ...TextFields,
    // Checked by the extractor itself, so a schema that is not an object with properties is the
    // spec's invalid_schema rather than a generic validation error.
    schema: Type.Unknown({
      description:
        'JSON Schema of the object to extract: an object with properties of type string, number, integer, ' +
        'boolean, enum, arrays of strings (arrays of objects come back empty) and nested objects',
    }),
  },
  { $id: 'ExtractRequest', additionalProperties: false },
);

export const ExtractResult = Type.Object(
  { data: Type.Record(Type.String(), Type.Unknown(), { description: 'the filled schema; missing values are null' }) },
  { $id: 'ExtractResult' },
);

export const extractApi = capabilityApi({
  name: 'extract',
  summary: 'Fill a JSON Schema from the text.',
  request: ExtractRequest,
  response: results(ExtractResult),
  example: {
    text: EXAMPLE_TEXT,
    schema: { type: 'object', properties: { payer: { type: 'string' }, amount: { type: 'number' } } },
  },
});
