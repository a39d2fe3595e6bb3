// The eight capability endpoints as data: request and result schemas per path. The routes
// validate with these objects and /openapi.json is generated from them, so neither can drift.
import { Type, type TSchema } from '@sinclair/typebox';
import { YesNoRequest, YesNoResult } from './yes-no.js';
import { ClassifyRequest, ClassifyResult } from './classify.js';
import { ClassifyTreeRequest, ClassifyTreeResult } from './classify-tree.js';
import { RateRequest, RateResult } from './rate.js';
import { AnswerRequest, AnswerResult } from './answer.js';
import { ExtractRequest, ExtractResult } from './extract.js';
import { EntitiesRequest, EntitiesResult } from './entities.js';
import { VerifyRequest, VerifyResult } from './verify.js';

export const CAPABILITY_PREFIX = '/v1/decision-machine-1';

export interface CapabilitySchema {
  summary: string;
  request: TSchema;
  response: TSchema;
}

/** `text` gives one result, `texts` gives `{ results }`; with `nested`, lists of lists too. */
function results(result: TSchema, nested = false): TSchema {
  const list = Type.Object({ results: Type.Array(result) });
  return nested
    ? Type.Union([result, list, Type.Object({ results: Type.Array(Type.Object({ results: Type.Array(result) })) })])
    : Type.Union([result, list]);
}

export const CAPABILITIES = {
  'yes-no': {
    summary: 'Is a statement true of the text?',
    request: YesNoRequest,
    response: results(YesNoResult, true),
  },
  classify: { summary: 'Which label fits the text?', request: ClassifyRequest, response: results(ClassifyResult) },
  'classify-tree': {
    summary: 'Which path through a label tree fits the text?',
    request: ClassifyTreeRequest,
    response: results(ClassifyTreeResult),
  },
  rate: { summary: 'Where does the text sit on a scale?', request: RateRequest, response: results(RateResult) },
  answer: {
    summary: 'Which span of the text answers the question?',
    request: AnswerRequest,
    response: results(AnswerResult, true),
  },
  extract: { summary: 'Fill a JSON Schema from the text.', request: ExtractRequest, response: results(ExtractResult) },
  entities: {
    summary: 'Which spans of the text are of the given types?',
    request: EntitiesRequest,
    response: results(EntitiesResult),
  },
  verify: {
    summary: 'Does the text give this value for the field?',
    request: VerifyRequest,
    response: results(VerifyResult),
  },
} satisfies Record<string, CapabilitySchema>;

export type Capability = keyof typeof CAPABILITIES;

export const MODEL_ID = 'decision-machine-1';

export const Model = Type.Object(
  { id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() },
  { $id: 'Model' },
);

export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(Model) });
