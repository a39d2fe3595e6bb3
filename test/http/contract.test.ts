// A contract test generated from /openapi.json: for every operation, the valid request from
// test/helpers/examples.ts and invalid requests derived from the operation's request schema
// (missing required fields, wrong types, unknown keys, bounds + 1, no body, bad JSON, no key,
// body over the cap, wrong method). Each answer must have a documented status, the error envelope
// for errors (with x-should-retry), and a body valid under the documented response schema.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { issueKey } from '../../src/auth/keys.js';
import { startGatedServer } from '../helpers/gated-server.js';
import { EXAMPLES, concrete } from '../helpers/examples.js';
import { openapiDocument } from '../../src/http/openapi.js';

type Json = Record<string, any>;

const dir = mkdtempSync(join(tmpdir(), 'dm-contract-'));
const server = await startGatedServer({
  auth: 'on',
  databaseUrl: join(dir, 'service.db'),
  rateLimit: 100_000,
  maxBodyBytes: 256 * 1024,
});
t.teardown(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
const { key } = await issueKey(server.access.store, 'test', 'contract');
const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
ajv.addSchema({ $id: 'doc', components: doc.components });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
function validator(schema: Json) {
  const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
  if (!compiled.has(text)) compiled.set(text, ajv.compile(JSON.parse(text)));
  return compiled.get(text)!;
}
const resolve = (schema: Json): Json =>
  schema.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop()]) : schema;

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string;
  auth?: boolean;
  expect?: number; // a specific status, else any documented one
}

/** Invalid variants of a valid body, derived from the request schema. */
function invalidBodies(schema: Json, valid: Json): [string, unknown][] {
  const s = resolve(schema);
  const out: [string, unknown][] = [
    ['array body', []],
    ['empty object', {}],
  ];
  const props: Json = s.properties ?? {};
  for (const name of s.required ?? []) {
    const { [name]: _dropped, ...rest } = valid;
    out.push([`without required ${name}`, rest]);
  }
  for (const [name, raw] of Object.entries(props)) {
    const p = resolve(raw as Json);
    const wrong =
      p.type === 'string'
        ? 12345
        : p.type === 'number' ||
            p.type === 'integer' ||
            p.type === 'array' ||
            p.type === 'object' ||
            p.type === 'boolean'
          ? 'not the right type'
          : undefined;
    if (wrong !== undefined && name in valid) out.push([`${name} of the wrong type`, { ...valid, [name]: wrong }]);
    if (typeof p.maxLength === 'number')
      out.push([`${name} over maxLength`, { ...valid, [name]: 'x'.repeat(p.maxLength + 1) }]);
    if (typeof p.maxItems === 'number' && Array.isArray(valid[name]))
      out.push([`${name} over maxItems`, { ...valid, [name]: Array(p.maxItems + 1).fill(valid[name][0]) }]);
    if (typeof p.minItems === 'number' && p.minItems > 0 && Array.isArray(valid[name]))
      out.push([`${name} under minItems`, { ...valid, [name]: valid[name].slice(0, p.minItems - 1) }]);
  }
  if (s.additionalProperties === false) out.push(['an unknown key', { ...valid, zz_unknown: 1 }]);
  return out;
}

const cases: Case[] = [];
for (const [pattern, item] of Object.entries(doc.paths as Json)) {
  for (const [method, op] of Object.entries(item as Json)) {
    const path = concrete(pattern);
    const guarded = pattern.startsWith('/v1/');
    const json = op.requestBody?.content?.['application/json']?.schema;
    const example = EXAMPLES[pattern] as Json | undefined;
    if (json && !example) t.fail(`${pattern}: no example request in test/helpers/examples.ts`);
    // Raw-body operations (audio) without an example are checked for everything but success.
    if (!op.requestBody || example)
      cases.push({
        name: `${op.operationId}: valid`,
        method,
        path,
        body: example && JSON.stringify(example),
        expect: Number(Object.keys(op.responses).find((s) => s.startsWith('2'))), // 202 for a correction
      });
    cases.push({
      name: `${op.operationId}: wrong method`,
      method: method === 'get' ? 'delete' : 'put',
      path,
      expect: 404,
    });
    if (guarded)
      cases.push({
        name: `${op.operationId}: no key`,
        method,
        path,
        body: example && JSON.stringify(example),
        auth: false,
        expect: 401,
      });
    if (pattern === '/v1/models/{id}')
      cases.push({ name: 'retrieveModel: unknown id', method, path: '/v1/models/gpt-4o', expect: 404 });
    if (!json || !example) continue;
    const invalid = op.responses[422] ? 422 : 400; // System One's wire refuses bad requests with 422
    cases.push({ name: `${op.operationId}: no body`, method, path, body: '', expect: invalid });
    cases.push({ name: `${op.operationId}: invalid JSON`, method, path, body: '{"text": ', expect: invalid });
    cases.push({
      name: `${op.operationId}: over the body cap`,
      method,
      path,
      body: JSON.stringify({ ...example, text: 'x'.repeat(300 * 1024) }),
      expect: 413,
    });
    for (const [what, body] of invalidBodies(json, example))
      cases.push({ name: `${op.operationId}: ${what}`, method, path, body: JSON.stringify(body), expect: invalid });
  }
}

t.test('the document with keys and limits on: OpenAPI 3.1.1, valid, bearer scheme required', async (t) => {
  t.equal(doc.openapi, '3.1.1');
  t.equal(doc.info.version, '1.0.0');
  const verdict = await new Validator().validate(JSON.parse(JSON.stringify(doc)));
  t.same(verdict.errors ?? [], [], 'valid under an OpenAPI 3.1 validator');
  t.same(doc.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.bearerAuth.description,
  });
  t.same(doc.security, [{ bearerAuth: [] }]);
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const op of Object.values(item as Json)) {
      if (path.startsWith('/v1/')) t.ok(op.responses[401] && op.responses[429], `${path}: 401 and 429 documented`);
      else t.same(op.security, [], `${path}: public`);
    }
  }
});

t.test('with a whisper model loaded, the document adds transcription behind the same gate', async (t) => {
  const audio = openapiDocument('test', { keys: true, rateLimit: true, audio: true }) as Json;
  const verdict = await new Validator().validate(JSON.parse(JSON.stringify(audio)));
  t.same(verdict.errors ?? [], [], 'valid under an OpenAPI 3.1 validator');
  const op = audio.paths['/v1/audio/transcribe'].post;
  t.same(Object.keys(op.requestBody.content), ['audio/*', 'application/octet-stream']);
  t.same(Object.keys(op.responses).sort(), ['200', '400', '401', '413', '415', '429', '502', '503', '504', '529']);
  t.ok(audio.components.schemas.TranscriptionResponse);
});

t.test('every operation against its documented contract', async (t) => {
  const failures: string[] = [];
  const byStatus: Record<number, number> = {};
  for (const c of cases) {
    const res = await fetch(server.url + c.path, {
      method: c.method.toUpperCase(),
      headers: { 'content-type': 'application/json', ...(c.auth === false ? {} : { authorization: `Bearer ${key}` }) },
      body: c.body,
    });
    const text = await res.text();
    byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
    const fail = (why: string) =>
      failures.push(`${c.name} (${c.method.toUpperCase()} ${c.path}): ${why}; got ${res.status} ${text.slice(0, 160)}`);
    if (c.expect !== undefined && res.status !== c.expect) {
      fail(`expected ${c.expect}`);
      continue;
    }
    if (res.status === 404 && c.expect === 404 && !c.path.startsWith('/v1/models/gpt')) {
      if (text !== 'Not Found' || !res.headers.get('content-type')?.startsWith('text/plain'))
        fail('expected plain-text Not Found');
      continue;
    }
    const pattern = Object.keys(doc.paths).find(
      (p) => concrete(p) === c.path || (p === '/v1/models/{id}' && c.path.startsWith('/v1/models/')),
    )!;
    const response = doc.paths[pattern][c.method]?.responses?.[String(res.status)];
    if (!response) {
      fail('status not documented');
      continue;
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) continue;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      fail('not JSON');
      continue;
    }
    const validate = validator(schema);
    if (!validate(body)) fail(`body does not match the documented schema: ${ajv.errorsText(validate.errors)}`);
    if (res.status >= 400 && res.headers.get('x-should-retry') === null) fail('error without x-should-retry');
    for (const [header, spec] of Object.entries((response.headers ?? {}) as Json))
      if (res.status === 200 && spec.required !== false && res.headers.get(header) === null)
        fail(`documented header ${header} missing`);
  }
  t.comment(
    `contract: ${cases.length} cases over ${Object.values(doc.paths).reduce((n: number, i) => n + Object.keys(i as Json).length, 0)} operations (statuses ${JSON.stringify(byStatus)}), ${failures.length} failures`,
  );
  t.same(failures, [], '0 failures');
  t.ok(cases.length > 100);
  // The schemas really bind: an empty object is neither an error envelope nor a yes-no result.
  const op = doc.paths['/v1/decision-machine-1/yes-no'].post;
  t.notOk(validator(op.responses[400].content['application/json'].schema)({}));
  t.notOk(validator(op.responses[200].content['application/json'].schema)({ answer: 'yes' }));
  t.ok(validator(op.responses[400].content['application/json'].schema)({ error: { code: 'x', message: 'y' } }));
});
