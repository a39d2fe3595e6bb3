import { Type } from '@sinclair/typebox';
import { Probability, TextFields } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

export const MAX_LABELS = 64;

const LabelName = Type.String({ minLength: 1 });

/** A list of 2 to 64 names, or name -> description (descriptions improve accuracy). */
const Labels = Type.Union([
  Type.Array(LabelName, { minItems: 2, maxItems: MAX_LABELS, uniqueItems: true }),
  Type.Record(Type.String({ pattern: '^.+$' }), Type.String(), {
    minProperties: 2,
    maxProperties: MAX_LABELS,
    additionalProperties: false,
  }),
]);

export const ClassifyRequest = Type.Object(
  { ...TextFields, labels: Labels },
  { $id: 'ClassifyRequest', additionalProperties: false },
);

export const ClassifyResult = Type.Object(
  {
    label: Type.String({ description: 'the winning label name, never its description' }),
    probability: Probability,
    confidence: Type.Number({ minimum: 0, maximum: 1, description: '1 minus normalised entropy' }),
    scores: Type.Record(Type.String(), Probability, { description: 'one probability per label; they sum to 1' }),
  },
  { $id: 'ClassifyResult' },
);

export const classifyApi = capabilityApi({
  name: 'classify',
  summary: 'Which label fits the text?',
  request: ClassifyRequest,
  response: results(ClassifyResult),
  example: { texts: [EXAMPLE_TEXT, 'hello'], labels: ['payment', 'greeting'] },
});
