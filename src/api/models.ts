// The one model this service serves, as OpenAI's and System One's clients name it.
import { Type } from '@sinclair/typebox';

export const MODEL_ID = 'decision-machine-1';

/** The names a System One request may give the model: its clients' default and this service's id. */
export const SYSTEM_ONE_MODELS = ['jev-latest', MODEL_ID] as const;

export const Model = Type.Object(
  { id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() },
  { $id: 'Model' },
);

export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(Model) });
