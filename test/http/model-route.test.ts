// Every route that runs the model is made by one factory: with the service full, each answers 529
// before reading its body (a body it would refuse is not looked at), in its own wire's error
// shape; and each reply's billing reaches the x-input-* headers.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { Transcription } from '../../src/audio/transcription.js';
import { loadConfig } from '../../src/config.js';
import { serviceOf } from '../../src/service.js';
import { routes } from '../../src/http/routes.js';
import { serve } from '../../src/http/uws.js';
import { createLogger } from '../../src/log.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, SMALL } from '../helpers/server.js';
import { EXAMPLES } from '../helpers/examples.js';

const engine = await Engine.open({ ...SMALL, slots: 1, queue: 0, modelPath: 'fake' }, fakeBinding({ delayMs: 400 }));
await engine.loadWhisper('fake', '');
const service = { ...serviceOf(engine), transcription: new Transcription(engine, loadConfig({})) };
const all = routes(service);
const server = await serve(all, { host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20, log: createLogger('silent') });
t.teardown(async () => {
  server.close();
  await engine.close();
});
const base = `http://127.0.0.1:${server.port}`;
const modelPaths = all.filter((r) => r.admissible).map((r) => r.path);

t.test('every model route: 529 before its body is read', async (t) => {
  t.same(
    modelPaths.filter((p) => !p.startsWith('/v1/decision-machine-1/')),
    [
      '/v1/chat/completions',
      '/v1/systemone',
      '/v1/systemone/batch',
      '/v1/audio/transcribe',
      '/v1/audio/transcriptions',
    ],
    'chat, System One and audio are model routes, beside every capability',
  );
  const busy = post(`${base}/v1/decision-machine-1/rate`, EXAMPLES['/v1/decision-machine-1/rate']);
  await new Promise((r) => setTimeout(r, 100));
  for (const path of modelPaths) {
    // Not JSON, and not audio: read first, it would be a 400, 415 or 422.
    const res = await post(base + path, '{"not json', { headers: { 'content-type': 'text/plain' } });
    t.equal(res.status, 529, `${path}: 529, the body unread`);
    const body = res.json;
    t.equal(body.error.code, 'overloaded', `${path}: the envelope`);
    if (path.startsWith('/v1/systemone'))
      t.equal(body.detail.error_type, 'overloaded_error', `${path}: the wire's detail{}`);
  }
  t.equal((await busy).status, 200);
});

t.test("a reply's billing is written as x-input-* headers", async (t) => {
  for (const path of modelPaths.filter((p) => !p.includes('audio'))) {
    const res = await post(base + path, EXAMPLES[path]);
    t.equal(res.status, 200, `${path}: ${res.text.slice(0, 100)}`);
    t.ok(Number(res.headers.get('x-input-tokens')) > 0, `${path}: x-input-tokens`);
    t.ok(Number(res.headers.get('x-inference-ms')) >= 0, `${path}: x-inference-ms`);
  }
});
