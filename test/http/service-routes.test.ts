// Public and model routes: /openapi.json generated from the validation schemas, /v1/models.
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { fakeBinding } from '../helpers/fake-binding.js';
import { startServer } from '../helpers/server.js';

const server = await startServer(fakeBinding(), { modelPath: 'fake' });
t.teardown(server.close);

t.test('/openapi.json: OpenAPI 3.1.1, version 1.0.0, every capability with its schemas', async (t) => {
  const res = await fetch(`${server.url}/openapi.json`);
  t.equal(res.status, 200);
  const doc = (await res.json()) as any;
  t.equal(doc.openapi, '3.1.1');
  t.equal(doc.info.version, '1.0.0');
  for (const c of ['yes-no', 'classify', 'classify-tree', 'rate', 'answer', 'extract', 'entities', 'verify']) {
    const op = doc.paths[`/v1/decision-machine-1/${c}`]?.post;
    t.ok(op, c);
    t.same(Object.keys(op.responses).sort(), ['200', '400', '413', '502', '503', '504', '529']);
  }
  // Every reference resolves inside the document (the recursive classify tree included).
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
  t.ok(refs.length > 0);
  for (const r of new Set(refs)) {
    const name = r.slice('"$ref":"#/components/schemas/'.length, -1);
    t.ok(doc.components.schemas[name], `${r} resolves`);
  }
  t.equal(
    doc.components.schemas.ClassifyRequest.properties.labels.anyOf[0].maxItems,
    64,
    'the limits the routes enforce',
  );
  const verdict = await new Validator().validate(doc);
  t.same(verdict.errors ?? [], [], 'valid under an OpenAPI 3.1 validator');
  t.equal(verdict.valid, true);
});

t.test('/v1/models lists exactly decision-machine-1', async (t) => {
  const list = (await (await fetch(`${server.url}/v1/models`)).json()) as any;
  t.equal(list.object, 'list');
  t.same(
    list.data.map((m: { id: string }) => m.id),
    ['decision-machine-1'],
  );
  t.same(Object.keys(list.data[0]).sort(), ['created', 'id', 'object', 'owned_by']);
  const one = await fetch(`${server.url}/v1/models/decision-machine-1`);
  t.equal(one.status, 200);
  t.equal(((await one.json()) as any).object, 'model');
  const other = await fetch(`${server.url}/v1/models/gpt-4o`);
  t.equal(other.status, 404);
  t.same(await other.json(), {
    error: { code: 'model_not_found', message: 'model "gpt-4o" not found; use "decision-machine-1"' },
  });
});

t.test('GET / lists every route served: the capabilities, chat, System One and the model list', async (t) => {
  const { endpoints } = (await (await fetch(`${server.url}/`)).json()) as { endpoints: string[] };
  for (const e of [
    'POST /v1/decision-machine-1/yes-no',
    'POST /v1/chat/completions',
    'POST /v1/systemone',
    'POST /v1/systemone/batch',
    'GET /v1/models',
  ])
    t.ok(endpoints.includes(e), e);
  t.notOk(endpoints.includes('POST /v1/audio/transcribe'), 'no audio route without a whisper model');
});
