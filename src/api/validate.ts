// Request validation at the edge, for every route: one compile() of a TypeBox schema. A route
// picks the dialect its clients read errors in (fastify's per-route error formatter): the spec's
// `path: message` (at most three issues joined with "; ", path `body` for whole-object rules) by
// default, System One's FastAPI `detail[]` for its routes (src/api/systemone-errors.ts). Both
// refuse a lone surrogate anywhere in the body, found by findIllFormed.
import type { TSchema, Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { ERRORS, ServiceError } from '../errors.js';

export type Validator<T> = (body: unknown) => T;

/** How a route's clients are told why their body is refused. */
export interface Dialect {
  /** The error for a body the schema refused; `errors` are TypeBox's, in document order. */
  refuse(errors: Iterable<ValueError>, body: unknown): ServiceError;
  /** The error for a body the schema accepted but the clients' rules do not (a lone surrogate...). */
  rules(body: unknown): ServiceError | undefined;
}

export interface CompileOptions<T> {
  dialect?: Dialect;
  /** Rules across fields a schema cannot state (a tree's depth, texts x statements); throws a ServiceError. */
  check?: (value: T) => void;
}

/** The spec's dialect: `path: message`, at most three issues; a lone surrogate anywhere is refused. */
export const SPEC_DIALECT: Dialect = {
  refuse(errors) {
    const issues: string[] = [];
    for (const e of errors) {
      const line = describeIssue(e);
      if (!issues.includes(line)) issues.push(line);
      if (issues.length === 3) break;
    }
    return ERRORS.invalidRequest(issues.join('; '));
  },
  rules(body) {
    const bad = findIllFormed(body);
    if (bad === undefined) return undefined;
    const at = bad.path.length > 0 ? bad.path.join('.') : 'body';
    return ERRORS.invalidRequest(
      `${at}: ${bad.key ? 'a key contains' : 'contains'} a lone surrogate (invalid Unicode)`,
    );
  },
};

export function compile<S extends TSchema>(schema: S, options: CompileOptions<Static<S>> = {}): Validator<Static<S>> {
  const checker = TypeCompiler.Compile(schema);
  const { dialect = SPEC_DIALECT, check } = options;
  return (body) => {
    if (!checker.Check(body)) throw dialect.refuse(checker.Errors(body), body);
    const broken = dialect.rules(body);
    if (broken) throw broken;
    check?.(body);
    return body;
  };
}

function describeIssue(e: ValueError): string {
  // A union (labels: list or object) reports the issue of the member whose JSON type matches.
  if (e.type === ValueErrorType.Union) {
    for (const member of e.errors) {
      const first = member.First();
      if (first && !(first.path === e.path && TYPE_ERRORS.has(first.type))) return describeIssue(first);
    }
  }
  // An unknown key is a rule of the object that holds it, as in `body: Unrecognized key: "x"`.
  const at = e.type === ValueErrorType.ObjectAdditionalProperties ? e.path.replace(/\/[^/]*$/, '') : e.path;
  return `${pathOf(at)}: ${describe(e)}`;
}

const TYPE_ERRORS = new Set([
  ValueErrorType.Array,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Number,
  ValueErrorType.Integer,
  ValueErrorType.Boolean,
]);

function pathOf(pointer: string): string {
  if (pointer === '') return 'body';
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function typeName(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function describe(e: ValueError): string {
  const s = e.schema as Record<string, unknown>;
  switch (e.type) {
    case ValueErrorType.ArrayMinItems:
      return `Too small: expected array to have >=${s.minItems} items`;
    case ValueErrorType.ArrayMaxItems:
      return `Too big: expected array to have <=${s.maxItems} items`;
    case ValueErrorType.StringMinLength:
      return `Too small: expected string to have >=${s.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `Too big: expected string to have <=${s.maxLength} characters`;
    case ValueErrorType.ObjectMinProperties:
      return `Too small: expected object to have >=${s.minProperties} keys`;
    case ValueErrorType.ObjectMaxProperties:
      return `Too big: expected object to have <=${s.maxProperties} keys`;
    case ValueErrorType.ArrayUniqueItems:
      return 'Invalid input: expected unique items';
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `Too small: expected number to be >=${s.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `Too big: expected number to be <=${s.maximum}`;
    case ValueErrorType.ObjectAdditionalProperties: {
      const key = e.path.split('/').pop()!.replace(/~1/g, '/').replace(/~0/g, '~');
      return key === '' ? 'Too small: expected key to have >=1 characters' : `Unrecognized key: ${JSON.stringify(key)}`;
    }
    case ValueErrorType.Literal:
      return `Invalid input: expected ${JSON.stringify(s.const)}`;
    case ValueErrorType.Union:
      return `Invalid input: expected ${unionTypes(s)}, received ${typeName(e.value)}`;
    default: {
      const expected = (s.type as string | undefined) ?? (s.anyOf ? unionTypes(s) : 'a value');
      return `Invalid input: expected ${expected}, received ${typeName(e.value)}`;
    }
  }
}

function unionTypes(s: Record<string, unknown>): string {
  const types = ((s.anyOf as { type?: string }[] | undefined) ?? []).map((m) => m.type ?? 'value');
  return [...new Set(types)].join(' or ');
}

// JSON may carry "\ud800": a string that is not valid Unicode and cannot be tokenized faithfully,
// in a value or in a key (a label name, a schema property). One pass, linear in the body: the
// path is only copied out for the string found.
/**
 * The first lone surrogate in `root`, depth first: the path to the string holding it (array
 * indices as numbers), or to the object whose key holds it (`key`); undefined when there is none.
 */
export function findIllFormed(root: unknown): { path: (string | number)[]; key: boolean } | undefined {
  const path: (string | number)[] = [];
  const visit = (v: unknown): { path: (string | number)[]; key: boolean } | undefined => {
    if (typeof v === 'string') return v.isWellFormed() ? undefined : { path: [...path], key: false };
    if (v === null || typeof v !== 'object') return undefined;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] === 'string' ? v[i].isWellFormed() : v[i] === null || typeof v[i] !== 'object') continue;
        path.push(i);
        const found = visit(v[i]);
        path.pop();
        if (found !== undefined) return found;
      }
      return undefined;
    }
    for (const k of Object.keys(v)) {
      if (!k.isWellFormed()) return { path: [...path], key: true };
      path.push(k);
      const found = visit((v as Record<string, unknown>)[k]);
      path.pop();
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(root);
}
