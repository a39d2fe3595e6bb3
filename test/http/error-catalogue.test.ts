// The error catalogue (src/errors.ts) is the one place a code's status and retry hint are written:
// the README's error table lists it row for row, and /openapi.json documents every error
// response under its codes' status with their x-should-retry and Retry-After.
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODES, ERRORS, type ErrorCode } from '../../src/errors.js';
import { openapiDocument } from '../../src/http/openapi.js';
import { systemOneStatus } from '../../src/api/systemone-errors.js';

type Json = Record<string, any>;

const here = dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(resolve(here, '../../../README.md'), 'utf8');
const codes = Object.keys(CODES) as ErrorCode[];

/** The rows of the README's error table (after "Errors are"), as `status code`. */
function readmeRows(t: Test): string[] {
  const from = readme.indexOf('| status | code | when |');
  t.ok(from > 0, "the README's error table is found");
  const rows: string[] = [];
  for (const line of readme.slice(from).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [status, code] = line
      .split('|')
      .slice(1, 3)
      .map((c) => c.trim());
    rows.push(`${status} ${code}`);
  }
  return rows;
}

t.test("the README's error table is the catalogue, row for row", async (t) => {
  t.same(
    readmeRows(t),
    codes.map((code) => `${CODES[code].status} \`${code}\``),
  );
});

t.test('every error response of /openapi.json is documented from the catalogue', async (t) => {
  const doc = openapiDocument('test', { keys: true, rateLimit: true, tokenLimit: true, audio: true }) as Json;
  let checked = 0;
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue;
        const where = `${method.toUpperCase()} ${path} ${status}`;
        const named = codes.filter((c) => new RegExp(`\\b${c}\\b`).test(response.description));
        t.ok(named.length > 0, `${where}: names its codes`);
        const statusOf = path.startsWith('/v1/systemone') ? systemOneStatus : (c: ErrorCode) => CODES[c].status;
        for (const c of named) t.equal(statusOf(c), Number(status), `${where}: ${c} is sent with ${status}`);
        t.ok(response.headers['x-should-retry'], `${where}: x-should-retry`);
        t.match(response.headers['x-should-retry'].description, String(CODES[named[0]!].retry));
        t.equal(
          'retry-after' in response.headers,
          named.some((c) => CODES[c].retryAfter),
          `${where}: Retry-After documented when a code sends it`,
        );
        checked++;
      }
    }
  }
  t.ok(checked > 50, `${checked} error responses checked`);
});

t.test('the factories send their code with its status, retry hint and Retry-After', async (t) => {
  const cases = [
    [ERRORS.invalidRequest('text: x'), 'invalid_request', 'text: x'],
    [
      ERRORS.missingApiKey(),
      'missing_api_key',
      'missing API key: send your key in the Authorization header as "Bearer <key>"',
    ],
    [
      ERRORS.modelNotFound('"gpt-4o"', '"decision-machine-1"'),
      'model_not_found',
      'model "gpt-4o" not found; use "decision-machine-1"',
    ],
    [ERRORS.tooLarge('body', 10), 'payload_too_large', 'body: larger than the limit of 10 bytes'],
    [
      ERRORS.inflightCap(1),
      'rate_limit_exceeded',
      'this key already has 1 request in flight, its limit; send the next when one is answered',
    ],
    [
      ERRORS.storeUnavailable('the database is away'),
      'store_unavailable',
      'the database is away; retry in a few seconds',
    ],
    [ERRORS.timeout(5), 'timeout', 'request: not answered within its deadline of 5 ms; its work was cancelled'],
    [ERRORS.overloaded(), 'overloaded', 'all inference slots are busy; retry with backoff'],
  ] as const;
  for (const [err, code, message] of cases) {
    t.equal(err.code, code);
    t.equal(err.message, message);
    t.equal(err.status, CODES[code].status);
    t.equal(err.headers['x-should-retry'], String(CODES[code].retry));
    t.same(err.toJSON(), { error: { code, message } });
  }
  t.equal(ERRORS.inflightCap(2).refusal, 'inflight_cap', 'the in-flight cap counts as its own refusal');
  t.equal(ERRORS.inflightCap(2).headers['retry-after'], '1');
  t.equal(ERRORS.storeUnavailable('x').headers['retry-after'], '5');
  t.equal(ERRORS.timeout(1).refusal, 'deadline');
  t.same(ERRORS.rateLimitExceeded('m', { 'x-should-retry': 'false' }).headers, { 'x-should-retry': 'false' });
});
