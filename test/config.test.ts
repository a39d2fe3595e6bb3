import t from 'tap';
import { DEFAULTS, loadConfig } from '../src/config.js';
import { findModel } from '../src/models/manifest.js';

t.test('defaults, environment and overrides, in that order', async (t) => {
  t.equal(loadConfig({}).port, DEFAULTS.port);
  const c = loadConfig({ PORT: '9000', HOST: '0.0.0.0', DM_SLOTS: '3' }, { slots: 1 });
  t.equal(c.port, 9000);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.slots, 1);
  t.ok(Object.isFrozen(c));
});

t.test('a bad value names the variable, the rule and what came', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), /invalid configuration: PORT: .*got "eighty"/);
  t.throws(() => loadConfig({ DM_SLOTS: '0' }), /DM_SLOTS: .*greater or equal to 1 \(got 0\)/);
});

t.test('audio and store settings come from the same schema', async (t) => {
  const c = loadConfig({ DM_AUDIO: '0', DM_OFFLINE: 'true', DM_AUDIO_MAX_SECONDS: '2.5', DM_CACHE_DIR: '/tmp/models' });
  t.equal(c.audio, 'off');
  t.equal(c.offline, 'on');
  t.equal(c.audioMaxSeconds, 2.5);
  t.equal(c.cacheDir, '/tmp/models');
  t.equal(loadConfig({}).audio, 'on', 'the service transcribes by default');
  t.throws(() => loadConfig({ DM_AUDIO_LANGUAGE: 'english' }), /DM_AUDIO_LANGUAGE: .*got "english"/);
  t.throws(() => loadConfig({ DM_AUDIO: 'maybe' }), /DM_AUDIO: .*got "maybe"/);
});

t.test('every on/off switch takes the same spellings', async (t) => {
  const on = loadConfig({ DM_AUTH: '1', DM_TEXT_REUSE: 'true', DM_AUDIO: 'on', DM_OFFLINE: '1' });
  t.same([on.auth, on.textReuse, on.audio, on.offline], ['on', 'on', 'on', 'on']);
  const off = loadConfig({ DM_AUTH: 'false', DM_TEXT_REUSE: '0', DM_AUDIO: 'off', DM_OFFLINE: 'false' });
  t.same([off.auth, off.textReuse, off.audio, off.offline], ['off', 'off', 'off', 'off']);
  t.throws(() => loadConfig({ DM_AUTH: 'yes' }), /DM_AUTH: .*got "yes"/);
  t.throws(() => loadConfig({ DM_TEXT_REUSE: 'enabled' }), /DM_TEXT_REUSE: .*got "enabled"/);
});

t.test('the default models are entries of the manifest', async (t) => {
  for (const id of [DEFAULTS.model, DEFAULTS.encoder, DEFAULTS.whisperModel, DEFAULTS.vadModel])
    t.ok(findModel(id), id);
});

t.test('DM_NATIVE_LOG takes a level, and 1 for everything', async (t) => {
  t.equal(loadConfig({}).nativeLog, 'error');
  t.equal(loadConfig({ DM_NATIVE_LOG: '1' }).nativeLog, 'debug');
  t.equal(loadConfig({ DM_NATIVE_LOG: 'warn' }).nativeLog, 'warn');
  t.throws(() => loadConfig({ DM_NATIVE_LOG: 'loud' }), /DM_NATIVE_LOG: .*got "loud"/);
});

t.test('deadline, per-key in-flight cap and drain bound', async (t) => {
  const c = loadConfig({ DM_REQUEST_TIMEOUT_MS: '1500', DM_KEY_MAX_INFLIGHT: '3', DM_DRAIN_TIMEOUT_MS: '0' });
  t.equal(c.requestTimeoutMs, 1500);
  t.equal(c.keyMaxInflight, 3);
  t.equal(c.drainTimeoutMs, 0);
  t.equal(loadConfig({}).requestTimeoutMs, 300_000);
  t.throws(() => loadConfig({ DM_REQUEST_TIMEOUT_MS: '0' }), /DM_REQUEST_TIMEOUT_MS: .*got 0/);
  t.throws(() => loadConfig({ DM_KEY_MAX_INFLIGHT: 'lots' }), /DM_KEY_MAX_INFLIGHT: .*got "lots"/);
});
