// Request bodies as JSON: UTF-8 checked, nesting capped before any recursive code sees them.
// Parsed once per request: the gate (to count items) and the handler share the result.
import { ServiceError } from '../errors.js';
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

function parse(raw: Buffer): unknown {
  if (raw.length === 0) throw new ServiceError('invalid_request', 'body: Invalid input: expected a JSON object, received an empty body');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new ServiceError('invalid_request', 'body: not valid UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('invalid_request', `body: invalid JSON (${(err as Error).message})`);
  }
  if (nestingDepth(body) > MAX_NESTING) throw new ServiceError('invalid_request', `body: nested deeper than ${MAX_NESTING} levels`);
  return body;
}

// Validators recurse; a hostile 100,000-deep document must be refused before it reaches them.
const MAX_NESTING = 32;

function nestingDepth(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_NESTING) return deepest;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}
