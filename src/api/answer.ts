import { Type } from '@sinclair/typebox';
import { MAX_ITEMS, TextFields, checkDecisions } from './common.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

const Question = Type.String({ minLength: 1 });

export const AnswerRequest = Type.Object(
  {
    ...TextFields,
    question: Type.Optional(Question),
    questions: Type.Optional(
      Type.Array(Question, { minItems: 1, maxItems: MAX_ITEMS, description: 'answered with one shared prefill' }),
    ),
  },
  { $id: 'AnswerRequest', additionalProperties: false },
);

const Offset = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

export const AnswerResult = Type.Object(
  {
    question: Type.String(),
    answer: Type.Union([Type.String(), Type.Null()], { description: 'a span of the text; null when nothing fits' }),
    probability: Type.Number({ minimum: 0, maximum: 1, description: '0 when answer is null' }),
    start: Offset,
    end: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'exclusive' }),
  },
  { $id: 'AnswerResult' },
);

export const answerApi = capabilityApi({
  name: 'answer',
  summary: 'Which span of the text answers the question?',
  request: AnswerRequest,
  response: results(AnswerResult, true),
  check: checkDecisions,
  example: { text: EXAMPLE_TEXT, questions: ['Who paid?', 'Where?'] },
});
