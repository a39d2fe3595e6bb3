import { Type } from '@sinclair/typebox';
import { MAX_ITEMS, Probability, TextFields, checkDecisions } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

const Statement = Type.String({ minLength: 1, description: 'a claim to judge against the text' });

export const YesNoRequest = Type.Object(
  {
    ...TextFields,
    statement: Type.Optional(Statement),
    statements: Type.Optional(
      Type.Array(Statement, { minItems: 1, maxItems: MAX_ITEMS, description: 'judged with one shared prefill' }),
    ),
    when_true: Type.Optional(Type.String({ description: 'what makes the statement true; improves accuracy' })),
    when_false: Type.Optional(Type.String({ description: 'what makes the statement false' })),
  },
  { $id: 'YesNoRequest', additionalProperties: false },
);

export const YesNoResult = Type.Object(
  {
    statement: Type.String(),
    answer: Type.Boolean({ description: 'true exactly when probability >= 0.5' }),
    probability: Probability,
  },
  { $id: 'YesNoResult' },
);

export const yesNoApi = capabilityApi({
  name: 'yes-no',
  summary: 'Is a statement true of the text?',
  request: YesNoRequest,
  response: results(YesNoResult, true),
  check: checkDecisions,
  example: { text: EXAMPLE_TEXT, statements: ['It was paid', 'It was free'] },
});
