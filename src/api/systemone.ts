// The System One wire (POST /v1/systemone, as typesafe-sdk and jevcompat speak it): a `state` and
// named typed questions, `noul` / `choice` / `score`. The schemas below validate and produce
// /openapi.json; how the wire words its errors (FastAPI's 422 `detail[]`, else `detail{}`) is
// src/api/systemone-errors.ts.
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ITEMS, MAX_TEXT, Probability } from './common.js';
import { SYSTEM_ONE_MODELS } from './models.js';

export const SYSTEM_ONE_PATH = '/v1/systemone';
export const SYSTEM_ONE_BATCH_PATH = '/v1/systemone/batch';
export const MAX_OPTIONS = 255;
export const MAX_LEVELS = 10;
export const IMAGES_UNSUPPORTED = 'images are not supported by this deployment';

/** Text, or any JSON object or array (shown to the model as JSON). */
const Content = Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())]);
const Described = Type.Union([Content, Type.Null()]);
const Instructions = Type.Optional(
  Type.Union([Content, Type.Null()], { description: 'the question; text, or a JSON object or array' }),
);

export const NoulQuestion = Type.Object(
  {
    type: Type.Literal('noul'),
    instructions: Instructions,
    criteria: Type.Optional(
      Type.Union(
        [
          Type.Object(
            { true: Type.Optional(Described), false: Type.Optional(Described) },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        {
          description: 'what makes the answer yes (`true`) and no (`false`); either side may be left out',
        },
      ),
    ),
  },
  { $id: 'NoulQuestion', description: 'the probability that a statement holds' },
);

export const ChoiceQuestion = Type.Object(
  {
    type: Type.Literal('choice'),
    instructions: Instructions,
    criteria: Type.Record(Type.String(), Described, {
      minProperties: 2,
      maxProperties: MAX_OPTIONS,
      description: `option name -> description (or null); 2 to ${MAX_OPTIONS} options`,
    }),
  },
  { $id: 'ChoiceQuestion', description: 'which option fits' },
);

export const ScoreQuestion = Type.Object(
  {
    type: Type.Literal('score'),
    instructions: Instructions,
    criteria: Type.Array(Content, {
      minItems: 2,
      maxItems: MAX_LEVELS,
      description: `level descriptions from 0 (lowest) up; 2 to ${MAX_LEVELS}`,
    }),
  },
  { $id: 'ScoreQuestion', description: 'where the state sits on ordered levels' },
);

const State = Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())], {
  description: `what the questions are about: text, or a JSON object or array (at most ${MAX_TEXT} characters as JSON)`,
});
const Questions = Type.Record(Type.String(), Type.Union([NoulQuestion, ChoiceQuestion, ScoreQuestion]), {
  minProperties: 1,
  maxProperties: MAX_ITEMS,
  description: `question id (any non-empty string) -> question; 1 to ${MAX_ITEMS}, all answered over one reading of the state`,
});
const ModelName = Type.String({ description: `${SYSTEM_ONE_MODELS.map((m) => `"${m}"`).join(' or ')}` });

export const SystemOneRequest = Type.Object(
  { model: ModelName, state: State, questions: Questions },
  { $id: 'SystemOneRequest', description: 'Unknown top-level fields are ignored.' },
);

export const SystemOneBatchRequest = Type.Object(
  {
    model: ModelName,
    states: Type.Array(State, { minItems: 1, maxItems: MAX_ITEMS, description: 'each answered on its own' }),
    questions: Questions,
  },
  {
    $id: 'SystemOneBatchRequest',
    description: 'One question set over several states. Unknown top-level fields are ignored.',
  },
);

export type Question = Static<typeof NoulQuestion> | Static<typeof ChoiceQuestion> | Static<typeof ScoreQuestion>;
export type Content = Static<typeof Content>;

const Answer = Type.Union(
  [
    Type.Object({ type: Type.Literal('noul'), noul: Type.Number({ minimum: 0, maximum: 1, description: 'P(yes)' }) }),
    Type.Object({
      type: Type.Literal('choice'),
      choice: Type.String({ description: 'the most probable option' }),
      confidence: Type.Number({ minimum: 0, maximum: 1, description: '(p_max - 1/n) / (1 - 1/n)' }),
      probabilities: Type.Record(Type.String(), Probability, { description: 'one per option name; sum to 1' }),
    }),
    Type.Object({
      type: Type.Literal('score'),
      score: Type.Number({ description: 'the expected level: sum of i * p_i' }),
      confidence: Type.Number({
        minimum: 0,
        maximum: 1,
        description: "1 - sum p_i |i - mode| / the uniform distribution's spread",
      }),
      legend: Type.Record(Type.String(), Content, { description: '"0".."n-1" -> the level as sent' }),
      probabilities: Type.Record(Type.String(), Probability, { description: '"0".."n-1" -> probability; sum to 1' }),
    }),
  ],
  { $id: 'SystemOneAnswer' },
);
export const Usage = Type.Object(
  {
    input_tokens: Type.Integer({ minimum: 0, description: 'billed' }),
    output_tokens: Type.Integer({ minimum: 0, description: 'always 0: nothing is generated' }),
  },
  { $id: 'SystemOneUsage' },
);
const Answers = Type.Record(Type.String(), Answer, { description: 'question id -> answer' });

export const SystemOneResponse = Type.Object(
  { model: Type.String(), answers: Answers, usage: Usage },
  { $id: 'SystemOneResponse' },
);
export const SystemOneBatchResponse = Type.Object(
  {
    model: Type.String(),
    results: Type.Array(Type.Object({ answers: Answers }), { description: 'one per state, in order' }),
    usage: Usage,
  },
  { $id: 'SystemOneBatchResponse' },
);

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
      }),
    ),
    error: Type.Object({ code: Type.String(), message: Type.String() }),
  },
  { $id: 'SystemOneValidationError' },
);
export const SystemOneErrorBody = Type.Object(
  {
    detail: Type.Object({ error_type: Type.String(), message: Type.String() }),
    error: Type.Object({ code: Type.String(), message: Type.String() }),
  },
  { $id: 'SystemOneError' },
);
