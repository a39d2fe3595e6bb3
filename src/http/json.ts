// Request bodies as JSON: UTF-8 checked, nesting capped before any recursive code sees them.
// Parsed once per request: a route's cost (items counted before the rate limit) and its handler share the result.
import { ERRORS, ServiceError } from '../errors.js';
import { MAX_ITEMS } from '../api/common.js';
import type { ApiRequest } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const parsed = new WeakMap<ApiRequest, { value: unknown } | { error: ServiceError }>();

export function parseJson(req: ApiRequest): unknown {
  let result = parsed.get(req);
  if (!result) {
    try {
      result = { value: parse(req.body) };
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      result = { error: err };
    }
    parsed.set(req, result);
  }
  if ('error' in result) throw result.error;
  return result.value;
}

/**
 * One per item of the named lists of a JSON body (an object's keys count as items), each capped at
 * MAX_ITEMS as validation caps them, at least one: a body that is not a JSON object is one request.
 */
export function countItems(req: ApiRequest, lists: readonly string[]): number {
  if (req.body.toString('latin1', 0, 64).trimStart()[0] !== '{') return 1;
  let body: unknown;
  try {
    body = parseJson(req);
  } catch {
    return 1; // refused by the route's validation, still one request
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 1;
  let items = 0;
  for (const name of lists) {
    const list = (body as Record<string, unknown>)[name];
    if (Array.isArray(list)) items += Math.min(list.length, MAX_ITEMS);
    else if (list !== null && typeof list === 'object') items += Math.min(Object.keys(list).length, MAX_ITEMS);
  }
  return Math.max(1, items);
}

function parse(raw: Buffer): unknown {
  if (raw.length === 0)
    throw ERRORS.invalidRequest('body: Invalid input: expected a JSON object, received an empty body');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw ERRORS.invalidRequest('body: not valid UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw ERRORS.invalidRequest(`body: invalid JSON (${(err as Error).message})`);
  }
  if (nestedTooDeep(body, 0)) throw ERRORS.invalidRequest(`body: nested deeper than ${MAX_NESTING} levels`);
  return body;
}

// Validators recurse; a hostile 100,000-deep document must be refused before it reaches them.
const MAX_NESTING = 32;

// Recursion is safe here: it stops at MAX_NESTING + 1 levels. Primitives cost one type check.
function nestedTooDeep(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_NESTING) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (typeof child === 'object' && nestedTooDeep(child, depth + 1)) return true;
    return false;
  }
  for (const key of Object.keys(value))
    if (nestedTooDeep((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}
