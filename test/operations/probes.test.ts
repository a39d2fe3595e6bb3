// GET /health and GET /ready through the phases of a process (loading, ready, draining), the
// model routes' 503 not_ready while loading, and the probes in /openapi.json. Fake engine; the
// real process's start and SIGTERM drain are test/real-model/drain.test.ts.
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Engine } from '../../src/engine/engine.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { Probes } from '../../src/http/probes.js';
import { openapiDocument } from '../../src/http/openapi.js';
import { createLogger } from '../../src/log.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, SMALL } from '../helpers/server.js';

t.test('loading, ready, draining', async (t) => {
  const probes = new Probes();
  const server = await serve(probes.routes(), {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1 << 16,
    log: createLogger('silent'),
  });
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${server.port}`;
  const get = async (path: string) => {
    const res = await fetch(url + path);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const yesNo = () => post(`${url}/v1/decision-machine-1/yes-no`, { text: 'a', statement: 'b [true]' });

  const health = await get('/health');
  t.equal(health.status, 200, 'alive while loading');
  t.match(JSON.parse(health.text), { status: 'ok', phase: 'loading' });
  const ready = await get('/ready');
  t.equal(ready.status, 503);
  t.same(JSON.parse(ready.text), {
    error: { code: 'not_ready', message: 'the model is still loading; retry in a few seconds' },
  });
  const early = await yesNo();
  t.equal(early.status, 503, 'a model route answers 503 while loading');
  t.equal(early.json.error.code, 'not_ready');
  t.equal(early.headers.get('x-should-retry'), 'true');
  t.equal((await get('/')).status, 503);

  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, fakeBinding({ delayMs: 300 }));
  server.add(routes(serviceOf(engine)).map(probes.tracked));
  probes.ready();
  t.equal((await get('/ready')).status, 200, 'ready once the routes are served');
  t.equal((await yesNo()).status, 200);
  const unrouted = await get('/nowhere');
  t.equal(unrouted.status, 404, 'an unknown path is still a plain 404');
  t.equal(unrouted.text, 'Not Found');
  t.match(unrouted.type, /^text\/plain/);

  const admitted = yesNo();
  await new Promise((r) => setTimeout(r, 50));
  probes.drain();
  const closing = engine.close();
  t.equal((await get('/ready')).status, 503, 'draining: not ready at once');
  t.match(JSON.parse((await get('/health')).text), { phase: 'draining' });
  const refused = await yesNo();
  t.equal(refused.status, 503, 'a new request during the drain');
  t.match(refused.json.error, { code: 'not_ready', message: /shutting down/ });
  t.equal((await admitted).status, 200, 'the admitted one is answered');
  await closing;
  await probes.settled();
});

t.test('/openapi.json: both probes public, 503 and 504 and the deadline header on model routes', async (t) => {
  const doc = openapiDocument('test', { keys: true, rateLimit: true, audio: true }) as any;
  t.same((await new Validator().validate(JSON.parse(JSON.stringify(doc)))).errors ?? [], []);
  for (const path of ['/health', '/ready']) t.same(doc.paths[path].get.security, [], `${path} public`);
  t.ok(doc.paths['/ready'].get.responses[503]);
  const op = doc.paths['/v1/decision-machine-1/yes-no'].post;
  t.ok(op.responses[503] && op.responses[504]);
  t.match(op.responses[429].description, /DM_KEY_MAX_INFLIGHT/);
  t.ok(op.parameters.some((p: { name: string }) => p.name === 'x-request-timeout-ms'));
  const form = doc.paths['/v1/audio/transcriptions'].post;
  t.same(form.requestBody.content['multipart/form-data'].schema.required, ['file', 'model']);
  t.ok(form.responses[401], 'behind the same gate');
});
