// The wire half of a capability: its path name, schemas, cross-field rules and a valid request.
// src/decisions/capabilities.ts pairs each with the decision that answers it, in one table that
// the routes, /openapi.json, the library and the tests read.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const CAPABILITY_PREFIX = '/v1/decision-machine-1';

export interface CapabilityApi<N extends string = string, Q extends TSchema = TSchema, R extends TSchema = TSchema> {
  /** The path under CAPABILITY_PREFIX; the library's method is its camelCase (`classify-tree` -> `classifyTree`). */
  name: N;
  summary: string;
  request: Q;
  response: R;
  /** Rules across fields the schema cannot state, refused with invalid_request by HTTP and the library alike. */
  check?(input: Static<Q>): void;
  /** A valid request: /openapi.json's example and the one the tests send. */
  example: Static<Q>;
}

/** Declares a capability's wire half, keeping its literal name and schema types. */
export function capabilityApi<N extends string, Q extends TSchema, R extends TSchema>(
  api: CapabilityApi<N, Q, R>,
): CapabilityApi<N, Q, R> {
  return api;
}

/** `text` gives one result, `texts` gives `{ results }`; with `nested`, lists of lists too. */
export function results<R extends TSchema>(result: R, nested = false) {
  const list = Type.Object({ results: Type.Array(result) });
  return nested
    ? Type.Union([result, list, Type.Object({ results: Type.Array(Type.Object({ results: Type.Array(result) })) })])
    : Type.Union([result, list]);
}

/** An example's text. */
export const EXAMPLE_TEXT = 'Sam Ortiz paid 2000 USD in Paris on Thursday.';
