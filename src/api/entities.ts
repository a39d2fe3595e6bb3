import { Type } from '@sinclair/typebox';
import { Probability, TextFields } from './common.js';
import { MAX_LABELS } from './classify.js';
import { capabilityApi, EXAMPLE_TEXT, results } from './capability.js';

/** 1 to 64 type names, or type -> description. */
const EntityTypes = Type.Union([
  Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_LABELS, uniqueItems: true }),
  Type.Record(Type.String({ pattern: '^.+$' }), Type.String(), {
    minProperties: 1,
    maxProperties: MAX_LABELS,
    additionalProperties: false,
  }),
]);

export const EntitiesRequest = Type.Object(
  { ...TextFields, types: EntityTypes },
  { $id: 'EntitiesRequest', additionalProperties: false },
);

export const Entity = Type.Object(
  {
    type: Type.String(),
    text: Type.String(),
    probability: Probability,
    start: Type.Integer({ minimum: 0 }),
    end: Type.Integer({ minimum: 0, description: 'exclusive' }),
  },
  { $id: 'Entity' },
);

export const EntitiesResult = Type.Object(
  { entities: Type.Array(Entity, { description: 'sorted by start' }) },
  { $id: 'EntitiesResult' },
);

export const entitiesApi = capabilityApi({
  name: 'entities',
  summary: 'Which spans of the text are of the given types?',
  request: EntitiesRequest,
  response: results(EntitiesResult),
  example: { text: EXAMPLE_TEXT, types: ['person', 'place'] },
});
