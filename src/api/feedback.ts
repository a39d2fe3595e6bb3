// The wire of corrections (src/feedback): what POST .../feedback takes and answers, and
// GET /v1/heads's listing. Documentation schemas: the route checks a correction as `fit` checks
// a line (src/feedback/corrections.ts), which names the field at fault.
import { Type } from '@sinclair/typebox';

const Expect = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'what the decision should have answered, as a fit line holds it: {answer} (yes-no), {label} (classify), {path} (classify-tree), {level} (rate), {matches} (verify)',
  },
);

export const FeedbackRequest = Type.Union(
  [
    Type.Object(
      { id: Type.String({ description: 'the x-decision-id of the decision' }), expect: Expect },
      { additionalProperties: false },
    ),
    Type.Object(
      { cap: Type.String(), req: Type.Object({}, { additionalProperties: true }), expect: Expect },
      { additionalProperties: false, description: 'a whole fit line, for a decision the service never made' },
    ),
  ],
  { $id: 'FeedbackRequest' },
);

export const FeedbackResponse = Type.Object(
  {
    object: Type.Literal('correction'),
    id: Type.String(),
    decision: Type.Union([Type.String(), Type.Null()]),
    capability: Type.String(),
    signature: Type.String({ description: 'the decision its corrections teach (`heads refit SIGNATURE`)' }),
    corrections: Type.Integer({ description: "the organization's corrections of this decision so far" }),
  },
  { $id: 'FeedbackResponse' },
);

export const HeadList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        id: Type.String(),
        capability: Type.String(),
        organization: Type.Union([Type.String(), Type.Null()], { description: "null: the deployment's head" }),
        examples: Type.Integer(),
        fitted_at: Type.String({ description: 'when this version was fitted' }),
        live: Type.Object({
          judged: Type.Integer({ description: 'its decisions judged by corrections sent after it was fitted' }),
          right: Type.Integer(),
          accuracy: Type.Union([Type.Number(), Type.Null()]),
        }),
      }),
    ),
  },
  { $id: 'HeadList' },
);
