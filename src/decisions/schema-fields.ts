// Reads an extract JSON Schema into the fields to fill. Only what can be enforced is accepted;
// any other keyword is refused with a 400 that names it and where it is.
import { ERRORS, ServiceError } from '../errors.js';
import { kindOf, type ValueKind } from './value-kinds.js';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'strings' | 'objects';

export interface Field {
  path: string[]; // property names from the root
  kind: FieldKind;
  hint: string; // "path.to.name (title: description)" as the prompt shows it
  options?: string[]; // enum values
  shape?: ValueKind; // strings and lists of strings: the kind of value copied (value-kinds.ts)
  required: boolean; // listed in its object's `required`
}

export const MAX_FIELDS = 64;
/** Values of one enum: each is tokenized and compared with the others before admission. */
export const MAX_ENUM = 64;
/** Objects nested inside the root object. */
export const MAX_SCHEMA_DEPTH = 8;
/** Properties declared in the whole schema, nested objects included. */
export const MAX_PROPERTIES = 256;

// Annotations are used as hints; `required` and `additionalProperties: false` are satisfied by
// construction (every declared property is returned, null when the text lacks it, and no other).
// `format` is an annotation as JSON Schema 2020-12 makes it; email and uri are read as value kinds.
const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  '$comment',
  'examples',
  'default',
  'required',
  'format',
]);
const STRUCTURE = new Set(['type', 'properties', 'items', 'enum', 'additionalProperties']);

type Schema = Record<string, unknown>;

/** The schema's leaf fields in declaration order; throws invalid_schema / invalid_request. */
export function fieldsOf(schema: unknown): Field[] {
  if (
    !isObject(schema) ||
    schema.type !== 'object' ||
    !isObject(schema.properties) ||
    Object.keys(schema.properties).length === 0
  ) {
    throw ERRORS.invalidSchema('schema must be an object with properties');
  }
  const fields: Field[] = [];
  walkObject(schema, [], fields, { properties: 0 });
  if (fields.length > MAX_FIELDS) throw tooManyFields();
  return fields;
}

// Every limit is checked as the walk goes, so a huge schema is refused after the first item over.
function walkObject(schema: Schema, path: string[], out: Field[], seen: { properties: number }): void {
  if (path.length > MAX_SCHEMA_DEPTH)
    throw ERRORS.invalidRequest(`schema: objects nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  checkKeywords(schema, path);
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    refuse(path, 'additionalProperties', 'only additionalProperties: false can be enforced');
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [name, prop] of Object.entries(schema.properties as Schema)) {
    if (++seen.properties > MAX_PROPERTIES)
      throw ERRORS.invalidRequest(`schema: more than ${MAX_PROPERTIES} properties`);
    if (out.length > MAX_FIELDS) throw tooManyFields();
    const at = [...path, name];
    const must = required.has(name);
    if (!isObject(prop)) refuse(at, 'type', 'a property must be a schema object');
    checkKeywords(prop, at);
    // A nested field is named by its path: "recipient.name" and "sender.name" are asked apart.
    const hint = hintOf(at.join('.'), prop);
    if (Array.isArray(prop.enum)) {
      if (prop.enum.length > MAX_ENUM) throw ERRORS.invalidRequest(`${where(at)}.enum: more than ${MAX_ENUM} values`);
      if (prop.enum.length < 1 || !prop.enum.every((v) => typeof v === 'string' && v !== ''))
        refuse(at, 'enum', 'enum values must be non-empty strings');
      out.push({ path: at, kind: 'enum', hint, options: prop.enum as string[], required: must });
    } else if (prop.type === 'object') {
      if (!isObject(prop.properties) || Object.keys(prop.properties).length === 0)
        refuse(at, 'properties', 'a nested object needs properties');
      walkObject(prop, at, out, seen);
    } else if (prop.type === 'array') {
      const items = prop.items;
      if (!isObject(items)) refuse(at, 'items', 'an array needs an items schema');
      checkKeywords(items, at, '.items');
      if (items.type === 'string' && items.enum === undefined)
        out.push({ path: at, kind: 'strings', hint, required: must, ...shapeOf(name, items, at) });
      else if (items.type === 'object') out.push({ path: at, kind: 'objects', hint, required: must });
      else refuse(at, 'type', 'arrays may hold strings or objects', '.items');
    } else if (
      prop.type === undefined ||
      prop.type === 'string' ||
      prop.type === 'number' ||
      prop.type === 'integer' ||
      prop.type === 'boolean'
    ) {
      // A property with only a description is read as a string, as the hosted service reads it.
      const kind = prop.type ?? 'string';
      out.push({ path: at, kind, hint, required: must, ...(kind === 'string' ? shapeOf(name, prop, at) : {}) });
    } else {
      refuse(
        at,
        'type',
        `type ${JSON.stringify(prop.type)} is not supported (string, number, integer, boolean, enum, array, object)`,
      );
    }
  }
}

function checkKeywords(schema: Schema, path: string[], suffix = ''): void {
  for (const key of Object.keys(schema)) {
    if (!ANNOTATIONS.has(key) && !STRUCTURE.has(key)) refuse(path, key, 'this keyword cannot be enforced', suffix);
  }
}

/** The kind of value a string field holds (value-kinds.ts), from its `format` or its name. */
function shapeOf(name: string, schema: Schema, path: string[]): { shape?: ValueKind } {
  if (schema.format !== undefined && typeof schema.format !== 'string')
    refuse(path, 'format', 'format must be a string');
  const shape = kindOf(name, schema.format);
  return shape ? { shape } : {};
}

function hintOf(name: string, prop: Schema): string {
  const notes = [prop.title, prop.description].filter((x): x is string => typeof x === 'string' && x !== '');
  return notes.length > 0 ? `${name} (${notes.join(': ')})` : name;
}

function tooManyFields(): ServiceError {
  return ERRORS.invalidRequest(`schema: more than ${MAX_FIELDS} fields to fill`);
}

function where(path: string[]): string {
  return ['schema', ...path.flatMap((p) => ['properties', p])].join('.');
}

function refuse(path: string[], keyword: string, why: string, suffix = ''): never {
  const at = where(path) + suffix;
  throw ERRORS.invalidSchema(`${at}: unsupported keyword "${keyword}": ${why}`);
}

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
