// The System One wire (POST /v1/systemone, as typesafe-sdk and jevcompat speak it): a `state` and
// named typed questions, `noul` / `choice` / `score`. Validation failures are 422 with FastAPI's
// `detail: [{ loc, msg, type }]` (SYSTEM_ONE_DIALECT, plugged into validate.ts's compile()); other
// errors carry `detail: { error_type, message }` beside the service's own `error: { code, message }`
// (systemOneError). The schemas below validate and produce /openapi.json.
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { ServiceError, type ErrorCode } from '../errors.js';
import { MAX_ITEMS, MAX_TEXT, Probability } from './common.js';
import { SYSTEM_ONE_MODELS } from './models.js';
import type { Dialect } from './validate.js';

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

export interface Issue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A request the System One wire refuses with 422 and `detail[]`. */
export class ValidationFailed extends ServiceError {
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
    Type.Object({ model: ModelName, state: State, questions: Type.Record(Type.String(), Type.Unknown()) }),
  ),
  batch: TypeCompiler.Compile(
    Type.Object({
      model: ModelName,
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
  const refused = (body: unknown): ValidationFailed | undefined => {
    const issues = issuesOf(body, batch);
    return issues.length > 0 ? new ValidationFailed(issues.slice(0, 16)) : undefined;
  };
  return {
    refuse: (errors, body) => refused(body) ?? new ValidationFailed([...errors].slice(0, 16).map((e) => issue([], e))),
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
  const ill = findIllFormed(body, []);
  if (ill)
    issues.push({
      loc: ['body', ...ill],
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

function findIllFormed(v: unknown, path: (string | number)[]): (string | number)[] | undefined {
  if (typeof v === 'string') return v.isWellFormed() ? undefined : path;
  if (v === null || typeof v !== 'object') return undefined;
  for (const [k, x] of Object.entries(v)) {
    if (!k.isWellFormed()) return path;
    const found = findIllFormed(x, [...path, Array.isArray(v) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
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

/** An error as the System One wire shows it: 422 `detail[]` for a bad request, else `detail{}`. */
export function systemOneError(err: ServiceError): { status: number; body: unknown; headers: Record<string, string> } {
  const envelope = err.toJSON();
  if (err instanceof ValidationFailed)
    return { status: 422, body: { detail: err.issues, ...envelope }, headers: err.headers };
  if (err.code === 'invalid_request' || err.code === 'invalid_schema' || err.code === 'unsupported_request') {
    return {
      status: 422,
      body: { detail: [{ loc: ['body'], msg: err.message, type: 'value_error' }], ...envelope },
      headers: err.headers,
    };
  }
  return {
    status: err.status,
    body: { detail: { error_type: ERROR_TYPES[err.code] ?? 'api_error', message: err.message }, ...envelope },
    headers: err.headers,
  };
}
