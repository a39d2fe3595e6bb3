import { Type } from '@sinclair/typebox';
import { Probability, TextFields } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

export const VerifyRequest = Type.Object(
  {
    ...TextFields,
    field: Type.Object(
      { name: Type.String({ minLength: 1 }), description: Type.Optional(Type.String()) },
      { additionalProperties: false, description: 'the field to look for' },
    ),
    value: Type.Union([Type.String(), Type.Number()], { description: 'the value to check against the text' }),
  },
  { $id: 'VerifyRequest', additionalProperties: false },
);

export const VerifyResult = Type.Object(
  {
    matches: Type.Boolean(),
    probability: Probability,
    found: Type.Array(Type.String(), { description: 'the raw spans the text gives for the field, matching or not' }),
  },
  { $id: 'VerifyResult' },
);

export const verifyApi = capabilityApi({
  name: 'verify',
  summary: 'Does the text give this value for the field?',
  request: VerifyRequest,
  response: results(VerifyResult),
  example: { text: EXAMPLE_TEXT, field: { name: 'amount' }, value: 2000 },
});
