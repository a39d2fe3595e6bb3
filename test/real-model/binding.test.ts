// src/binding.ts is what the addon really is: the methods each class has, the fields stats()
// returns, the error codes it rejects with and the TypeError naming a bad setting. No model needed.
import t from 'tap';
import {
  isNativeError,
  loadBinding,
  type NativeEncoder,
  type NativeEngine,
  type PoolStats,
} from '../../src/binding.js';
import { SMALL_LOAD } from '../helpers/model.js';

const binding = loadBinding();
// Every key of the typed interfaces, and no other (the compiler checks both directions).
const ENGINE: Record<keyof NativeEngine, true> = {
  load: true,
  info: true,
  hiddenSize: true,
  layerCount: true,
  tokenize: true,
  applyTemplate: true,
  submit: true,
  loadWhisper: true,
  transcribe: true,
  tokenBytes: true,
  specialTokens: true,
  cancel: true,
  stats: true,
  close: true,
};
const ENCODER: Record<keyof NativeEncoder, true> = { load: true, embed: true, close: true };
const STATS: Record<keyof PoolStats, true> = {
  slots: true,
  running: true,
  queued: true,
  backgroundRunning: true,
  backgroundQueued: true,
  completed: true,
  failed: true,
  cancelled: true,
  rejected: true,
  promptCacheBytes: true,
  promptCachePrompts: true,
  promptCacheLoads: true,
  promptCacheTokens: true,
  promptCacheBorrows: true,
  promptCacheBorrowedTokens: true,
};
const methods = (cls: { prototype: object }) =>
  Object.getOwnPropertyNames(cls.prototype)
    .filter((m) => m !== 'constructor')
    .sort();

t.test('each class has exactly the methods binding.ts types', async (t) => {
  t.same(methods(binding.Engine), Object.keys(ENGINE).sort());
  t.same(methods(binding.Encoder), Object.keys(ENCODER).sort());
  t.same(methods(binding.SpeakerEncoder!), ['embed']);
  t.same(Object.keys(binding).sort(), ['Encoder', 'Engine', 'SpeakerEncoder', 'requantize', 'setLogLevel', 'versions']);
});

t.test('requantize names the option it cannot use', async (t) => {
  const options = {
    input: '/nonexistent.gguf',
    output: '/tmp/x.gguf',
    mixture: 'q4_k_m',
    tensors: { ffn_down: 'q4_k' },
  } as const;
  t.throws(() => binding.requantize({ ...options, mixture: 'q2' as 'q4_k_m' }), {
    name: 'TypeError',
    message: "options.mixture must be 'q4_k_m'",
  });
  t.throws(() => binding.requantize({ ...options, tensors: { ffn_down: 'f16' as 'q4_k' } }), {
    name: 'TypeError',
    message: "options.tensors.ffn_down must be 'q4_k'",
  });
  await t.rejects(binding.requantize(options), /llama_model_quantize failed for \/nonexistent\.gguf/);
});

t.test('stats() returns the typed fields, rejected included', async (t) => {
  t.same(Object.keys(new binding.Engine().stats()).sort(), Object.keys(STATS).sort());
});

t.test('a setting left out or out of range is a TypeError naming it: the addon has no defaults', async (t) => {
  const engine = new binding.Engine();
  const options = { modelPath: '/nonexistent.gguf', ...SMALL_LOAD };
  const { contextSize: _, ...withoutContext } = options;
  t.throws(() => engine.load(withoutContext as typeof options), {
    name: 'TypeError',
    message: /options\.contextSize must be a number/,
  });
  t.throws(() => engine.load({ ...options, slots: 0 }), {
    name: 'TypeError',
    message: /options\.slots must be an integer from 1/,
  });
  t.throws(() => engine.tokenize('x', false, false), { code: 'not_loaded' });
  const failed = await engine.load(options).catch((err: unknown) => err);
  t.ok(isNativeError(failed, 'load_failed'), 'a missing file rejects with load_failed');
  const encoder = new binding.Encoder();
  t.throws(() => encoder.load({ modelPath: '/nonexistent.gguf', threads: 1, sequences: 4 } as never), {
    name: 'TypeError',
    message: /options\.batchTokens/,
  });
});

t.test('the encoders reject with typed codes', async (t) => {
  const encoder = new binding.Encoder();
  const failed = await encoder
    .load({ modelPath: '/nonexistent.gguf', threads: 1, batchTokens: 512, sequences: 4 })
    .catch((err: unknown) => err);
  t.ok(isNativeError(failed, 'encoder_error'), 'a missing model is encoder_error');
  encoder.close();
  const closed = await encoder.embed(['text']).catch((err: unknown) => err);
  t.ok(isNativeError(closed, 'closed'), 'work after close() is closed');
  t.throws(() => new binding.SpeakerEncoder!(new Uint8Array(16)), { code: 'load_failed', message: /speaker model/ });
  const ge2e = Buffer.alloc(64);
  ge2e.write('DMSPKENC', 'latin1'); // the retired GE2E encoder's format
  t.throws(() => new binding.SpeakerEncoder!(ge2e), {
    code: 'load_failed',
    message: 'speaker model: not a version 1 CAM++ speaker model (DMSPKCAM)',
  });
});
