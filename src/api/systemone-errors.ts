// The System One wire's errors. Validation failures are 422 with FastAPI's
// `detail: [{ loc, msg, type }]` (SYSTEM_ONE_DIALECT, plugged into validate.ts's compile()); other
// errors carry `detail: { error_type, message }` beside the service's own `error: { code, message }`
// (systemOneError, the routes' error writer). The schemas are src/api/systemone.ts.
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { CODES, ServiceError, type ErrorCode } from '../errors.js';
import { MAX_ITEMS, MAX_TEXT } from './common.js';
import {
  ChoiceQuestion,
  IMAGES_UNSUPPORTED,
  NoulQuestion,
  ScoreQuestion,
  SystemOneBatchRequest,
  SystemOneRequest,
} from './systemone.js';
import { findIllFormed, type Dialect } from './validate.js';

export interface Issue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A request the System One wire refuses with 422 and `detail[]`. */
export class ValidationError extends ServiceError {
  constructor(readonly issues: Issue[]) {
    super(
      'invalid_request',
      issues
        .slice(0, 3)
        .map((i) => `${i.loc.slice(1).join('.') || 'body'}: ${i.msg}`)
        .join('; '),
    );
  }
}

const check = {
  single: TypeCompiler.Compile(
    Type.Object({
      model: SystemOneRequest.properties.model,
      state: SystemOneRequest.properties.state,
      questions: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
  batch: TypeCompiler.Compile(
    Type.Object({
      model: SystemOneRequest.properties.model,
      states: SystemOneBatchRequest.properties.states,
      questions: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
  noul: TypeCompiler.Compile(NoulQuestion),
  choice: TypeCompiler.Compile(ChoiceQuestion),
  score: TypeCompiler.Compile(ScoreQuestion),
};

/**
 * System One's dialect: every issue found (up to 16), FastAPI-style, as 422 `detail[]`. The issues
 * are read from the body whether or not the schema accepted it, so the rules the schema cannot
 * state (a state's length as JSON, a noul asking nothing, an image asset) are listed with the rest.
 */
function dialect(batch: boolean): Dialect {
  const refused = (body: unknown): ValidationError | undefined => {
    const issues = issuesOf(body, batch);
    return issues.length > 0 ? new ValidationError(issues.slice(0, 16)) : undefined;
  };
  return {
    refuse: (errors, body) => refused(body) ?? new ValidationError([...errors].slice(0, 16).map((e) => issue([], e))),
    rules: refused,
  };
}

export const SYSTEM_ONE_DIALECT = { single: dialect(false), batch: dialect(true) };

function issuesOf(body: unknown, batch: boolean): Issue[] {
  const issues: Issue[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return [{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }];
  const top = batch ? check.batch : check.single;
  for (const e of top.Errors(body)) issues.push(issue([], e));
  const b = body as Record<string, unknown>;
  if ('assets' in b) issues.push({ loc: ['body', 'assets'], msg: IMAGES_UNSUPPORTED, type: 'value_error' });
  const states = batch
    ? Array.isArray(b.states)
      ? b.states.map((s, i) => [['states', i], s] as const)
      : []
    : [[['state'], b.state] as const];
  for (const [loc, s] of states) {
    if (s !== undefined && s !== null && typeof s !== 'string' && JSON.stringify(s).length > MAX_TEXT)
      issues.push({
        loc: ['body', ...loc],
        msg: `State should have at most ${MAX_TEXT} characters as JSON`,
        type: 'string_too_long',
      });
    if (typeof s === 'string' && s.length > MAX_TEXT)
      issues.push({
        loc: ['body', ...loc],
        msg: `String should have at most ${MAX_TEXT} characters`,
        type: 'string_too_long',
      });
  }
  const questions = b.questions;
  if (questions !== null && typeof questions === 'object' && !Array.isArray(questions)) {
    const entries = Object.entries(questions);
    if (entries.length === 0)
      issues.push({
        loc: ['body', 'questions'],
        msg: 'Dictionary should have at least 1 item after validation, not 0',
        type: 'too_short',
      });
    if (entries.length > MAX_ITEMS)
      issues.push({
        loc: ['body', 'questions'],
        msg: `Dictionary should have at most ${MAX_ITEMS} items after validation, not ${entries.length}`,
        type: 'too_long',
      });
    for (const [id, q] of entries.slice(0, MAX_ITEMS)) issues.push(...questionIssues(id, q));
  }
  const ill = findIllFormed(body);
  if (ill)
    issues.push({
      loc: ['body', ...ill.path],
      msg: 'String contains a lone surrogate (invalid Unicode)',
      type: 'string_unicode',
    });
  return issues;
}

function questionIssues(id: string, q: unknown): Issue[] {
  const loc = ['questions', id];
  if (id === '')
    return [{ loc: ['body', ...loc], msg: 'Question id should have at least 1 character', type: 'string_too_short' }];
  if (q === null || typeof q !== 'object' || Array.isArray(q))
    return [{ loc: ['body', ...loc], msg: 'Input should be a valid dictionary', type: 'model_attributes_type' }];
  const type = (q as { type?: unknown }).type;
  if (type === undefined)
    return [
      { loc: ['body', ...loc], msg: "Unable to extract tag using discriminator 'type'", type: 'union_tag_not_found' },
    ];
  if (type === 'box')
    return [
      {
        loc: ['body', ...loc, 'type'],
        msg: `box questions locate things in images: ${IMAGES_UNSUPPORTED}`,
        type: 'value_error',
      },
    ];
  if (type !== 'noul' && type !== 'choice' && type !== 'score') {
    return [
      {
        loc: ['body', ...loc],
        msg: `Input tag ${JSON.stringify(type)} found using 'type' does not match any of the expected tags: 'noul', 'choice', 'score'`,
        type: 'union_tag_invalid',
      },
    ];
  }
  const out = [...check[type].Errors(q)].map((e) => issue([...loc, type], e));
  if (type === 'noul' && out.length === 0) {
    const { instructions, criteria } = q as Static<typeof NoulQuestion>;
    if (instructions == null && criteria?.true == null && criteria?.false == null) {
      out.push({
        loc: ['body', ...loc, type, 'instructions'],
        msg: 'A noul needs instructions or a described outcome (criteria.true or criteria.false)',
        type: 'missing',
      });
    }
  }
  if (type === 'choice' && out.length === 0 && '' in (q as { criteria: object }).criteria) {
    out.push({
      loc: ['body', ...loc, type, 'criteria', ''],
      msg: 'Option name should have at least 1 character',
      type: 'string_too_short',
    });
  }
  return dedupe(out);
}

// TypeBox reports a union once per member; the first issue per location is the useful one.
function dedupe(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = JSON.stringify(i.loc);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const TYPES: Partial<Record<ValueErrorType, [string, (s: Record<string, unknown>) => string]>> = {
  [ValueErrorType.ObjectRequiredProperty]: ['missing', () => 'Field required'],
  [ValueErrorType.String]: ['string_type', () => 'Input should be a valid string'],
  [ValueErrorType.Object]: ['dict_type', () => 'Input should be a valid dictionary'],
  [ValueErrorType.Array]: ['list_type', () => 'Input should be a valid list'],
  [ValueErrorType.Literal]: ['literal_error', (s) => `Input should be ${JSON.stringify(s.const)}`],
  [ValueErrorType.Union]: ['union_type', () => 'Input should be text, a JSON object or an array'],
  [ValueErrorType.ArrayMinItems]: ['too_short', (s) => `List should have at least ${s.minItems} items`],
  [ValueErrorType.ArrayMaxItems]: ['too_long', (s) => `List should have at most ${s.maxItems} items`],
  [ValueErrorType.ObjectMinProperties]: [
    'too_short',
    (s) => `Dictionary should have at least ${s.minProperties} items`,
  ],
  [ValueErrorType.ObjectMaxProperties]: ['too_long', (s) => `Dictionary should have at most ${s.maxProperties} items`],
  [ValueErrorType.ObjectAdditionalProperties]: ['extra_forbidden', () => 'Extra inputs are not permitted'],
};

function issue(base: (string | number)[], e: ValueError): Issue {
  const path =
    e.path === ''
      ? []
      : e.path
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
          .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const [type, msg] = TYPES[e.type] ?? ['value_error', () => e.message];
  return { loc: ['body', ...base, ...path], msg: msg(e.schema as Record<string, unknown>), type };
}

// The System One names for the service's error codes (`detail.error_type`).
const ERROR_TYPES: Partial<Record<ErrorCode, string>> = {
  missing_api_key: 'authentication_error',
  invalid_api_key: 'authentication_error',
  model_not_found: 'not_found',
  rate_limit_exceeded: 'rate_limit_error',
  payload_too_large: 'request_too_large',
  unsupported_media_type: 'invalid_request_error',
  overloaded: 'overloaded_error',
  runner_error: 'api_error',
  internal_error: 'api_error',
};

/** A code's `detail.error_type` on the wire. */
export function systemOneErrorType(code: ErrorCode): string {
  return ERROR_TYPES[code] ?? 'api_error';
}

// Codes of a request refused as sent: 422 `detail[]` on the wire, as FastAPI refuses a body.
const UNPROCESSABLE: ReadonlySet<ErrorCode> = new Set(['invalid_request', 'invalid_schema', 'unsupported_request']);

/** The status the wire sends a code with: 422 for a request refused as sent, else the catalogue's. */
export function systemOneStatus(code: ErrorCode): number {
  return UNPROCESSABLE.has(code) ? 422 : CODES[code].status;
}

/** An error as the System One wire shows it: 422 `detail[]` for a bad request, else `detail{}`. */
export function systemOneError(err: ServiceError): { status: number; body: unknown; headers: Record<string, string> } {
  const envelope = err.toJSON();
  if (err instanceof ValidationError)
    return { status: 422, body: { detail: err.issues, ...envelope }, headers: err.headers };
  if (UNPROCESSABLE.has(err.code)) {
    return {
      status: 422,
      body: { detail: [{ loc: ['body'], msg: err.message, type: 'value_error' }], ...envelope },
      headers: err.headers,
    };
  }
  return {
    status: err.status,
    body: { detail: { error_type: systemOneErrorType(err.code), message: err.message }, ...envelope },
    headers: err.headers,
  };
}
