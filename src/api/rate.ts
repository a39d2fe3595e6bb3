import { Type } from '@sinclair/typebox';
import { Probability, TextFields } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

export const RateRequest = Type.Object(
  {
    ...TextFields,
    scale: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 2,
      maxItems: 10,
      description: 'level descriptions, low to high',
    }),
  },
  { $id: 'RateRequest', additionalProperties: false },
);

export const RateResult = Type.Object(
  {
    score: Type.Number({ description: 'probability-weighted position, 0 to scale length - 1' }),
    level: Type.Integer({ description: 'index of the most likely level' }),
    label: Type.String({ description: 'the scale entry at level' }),
    confidence: Probability,
    scores: Type.Array(Probability, { description: 'one probability per level, in scale order' }),
  },
  { $id: 'RateResult' },
);

export const rateApi = capabilityApi({
  name: 'rate',
  summary: 'Where does the text sit on a scale?',
  request: RateRequest,
  response: results(RateResult),
  example: { text: EXAMPLE_TEXT, scale: ['low', 'mid', 'high'] },
});
