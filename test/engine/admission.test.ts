// Admission, retries and cancellation in the engine, against the fake binding.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transcription } from '../../src/audio/transcription.js';
import { DEFAULTS } from '../../src/config.js';
import { Engine } from '../../src/engine/engine.js';
import { CancelledError, ServiceError } from '../../src/errors.js';
import { fakeBinding } from '../helpers/fake-binding.js';
import { post, SMALL, startServer } from '../helpers/server.js';
import { scoreRound } from '../helpers/requests.js';

const job = {
  prefix: Int32Array.of(1, 2),
  branches: [Int32Array.of(3)],
  options: [Int32Array.of(4), Int32Array.of(5)],
};

t.test('when every slot is busy a request is refused at once with overloaded', async (t) => {
  const binding = fakeBinding({ delayMs: 300 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake', slots: 2, queue: 1 }, binding);
  const admitted = [scoreRound(engine, [job]), scoreRound(engine, [job]), scoreRound(engine, [job])];
  const started = performance.now();
  await t.rejects(scoreRound(engine, [job]), { code: 'overloaded' });
  t.ok(performance.now() - started < 50, 'refused without waiting');
  await Promise.all(admitted);
  t.equal(engine.stats().refused, 1);
  await engine.close();
});

t.test('a failing inference is retried once, then runner_error', async (t) => {
  const binding = fakeBinding({ failures: 1 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, binding);
  await scoreRound(engine, [job]);
  t.equal(binding.submitted, 2, 'one failure, one retry that succeeds');

  binding.behaviour.failures = 100;
  const before = binding.submitted;
  const err = await scoreRound(engine, [job]).catch((e: unknown) => e);
  t.ok(err instanceof ServiceError);
  t.equal((err as ServiceError).code, 'runner_error');
  t.equal((err as ServiceError).status, 502);
  t.equal(binding.submitted - before, 2, 'exactly two attempts');
  await engine.close();
});

t.test('aborting cancels the jobs and frees the slots', async (t) => {
  const binding = fakeBinding({ delayMs: 10_000 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, binding);
  const controller = new AbortController();
  const pending = scoreRound(engine, [job, job], controller.signal);
  t.equal(binding.running(), 2);
  controller.abort();
  await t.rejects(pending, CancelledError);
  t.equal(binding.running(), 0);
  t.equal(engine.stats().inflight, 0);
  await engine.close();
});

t.test('close waits for admitted requests, then refuses new ones', async (t) => {
  const binding = fakeBinding({ delayMs: 100 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, binding);
  const inflight = scoreRound(engine, [job]);
  const closed = engine.close();
  await t.resolves(inflight);
  await closed;
  await t.rejects(scoreRound(engine, [job]), { code: 'not_ready' });
});

t.test('over HTTP: 529 overloaded in the envelope, fast', async (t) => {
  const server = await startServer(fakeBinding({ delayMs: 500 }), { modelPath: 'fake', slots: 1, queue: 0 });
  t.teardown(server.close);
  const url = `${server.url}/v1/decision-machine-1/yes-no`;
  const first = post(url, { text: 'a', statement: 'b' });
  await new Promise((r) => setTimeout(r, 50));
  const started = performance.now();
  const second = await post(url, { text: 'a', statement: 'b' });
  t.equal(second.status, 529);
  t.same(second.json, { error: { code: 'overloaded', message: 'all inference slots are busy; retry with backoff' } });
  t.ok(performance.now() - started < 100, 'answered in milliseconds');
  t.equal((await first).status, 200);
});

t.test('over HTTP: a client that disconnects frees its slot', async (t) => {
  const binding = fakeBinding({ delayMs: 10_000 });
  const server = await startServer(binding, { modelPath: 'fake', slots: 1, queue: 0 });
  t.teardown(server.close);
  const controller = new AbortController();
  const gone = post(
    `${server.url}/v1/decision-machine-1/yes-no`,
    { text: 'a', statement: 'b' },
    { signal: controller.signal },
  );
  await new Promise((r) => setTimeout(r, 100));
  t.equal(binding.running(), 1);
  controller.abort();
  await gone.catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(binding.running(), 0, 'job cancelled');
  t.equal(server.engine.stats().inflight, 0, 'slot free');
});

t.test('over HTTP: two failures give 502 runner_error', async (t) => {
  const server = await startServer(fakeBinding({ failures: 2 }), { modelPath: 'fake' });
  t.teardown(server.close);
  const res = await post(`${server.url}/v1/decision-machine-1/yes-no`, { text: 'a', statement: 'b' });
  t.equal(res.status, 502);
  t.equal(res.json.error.code, 'runner_error');
});

t.test('an admitted request is never refused for its own second job (label priors, trees, chat tools)', async (t) => {
  // Capacity 4: four clients at once, each with a label set never seen, all admitted and answered.
  const server = await startServer(fakeBinding({ delayMs: 100 }), { modelPath: 'fake', slots: 2, queue: 2 });
  t.teardown(server.close);
  const api = `${server.url}/v1/decision-machine-1`;
  for (const round of ['classify', 'classify-tree', 'chat']) {
    const sent = [0, 1, 2, 3].map((i) => {
      const labels = [`${round} a${i}`, `${round} b${i}`, `${round} c${i}`];
      if (round === 'classify') return post(`${api}/classify`, { text: 'x', labels });
      if (round === 'classify-tree')
        return post(`${api}/classify-tree`, {
          text: 'x',
          tree: { [labels[0]!]: { labels: { [`${labels[1]} x`]: 'x', [`${labels[1]} y`]: 'y' } }, [labels[2]!]: 'z' },
        });
      const tools = labels.map((name) => ({ type: 'function', function: { name } }));
      return post(`${server.url}/v1/chat/completions`, {
        model: 'decision-machine-1',
        messages: [{ role: 'user', content: 'x' }],
        tools,
      });
    });
    const statuses = (await Promise.all(sent)).map((r) => r.status);
    t.same(statuses, [200, 200, 200, 200], `${round}: four first-time label sets, no 529`);
  }
  t.equal(server.engine.stats().refused, 0);
});

t.test("one admission per request: its session's rounds share it and its token budget", async (t) => {
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake', slots: 1, queue: 0 }, fakeBinding());
  t.teardown(() => engine.close());
  const session = engine.admit();
  await session.score([job]);
  const once = session.budget.spent;
  await session.score([job]);
  t.equal(engine.stats().inflight, 1, 'the second round is not admitted again');
  await t.rejects(
    scoreRound(engine, [job]),
    { code: 'overloaded' },
    'a second request is refused while this one holds the place',
  );
  t.equal(session.budget.limit, engine.requestTokens);
  t.same([once, session.budget.spent], [5, 10], 'each round charged to the one budget');
  session.close();
  t.equal(engine.stats().inflight, 0, 'closing the session gives its place back');
  session.close();
  t.equal(engine.stats().inflight, 0, 'a second close gives back nothing more');
  const over = { ...job, prefix: new Int32Array(3000) };
  const budgeted = engine.admit();
  t.teardown(() => budgeted.close());
  await t.rejects(
    (async () => {
      for (let round = 0; round < 3; round++) await budgeted.score([over]); // 3 x 3,003 tokens
    })(),
    { code: 'invalid_request', message: /needs 9009 tokens of model reading, more than the limit of 8192 per request/ },
    'rounds over the request budget refused with a 400',
  );
});

t.test('work that throws leaves no job running once its session is closed', async (t) => {
  const binding = fakeBinding({ delayMs: 10_000 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, binding);
  t.teardown(() => engine.close());
  const session = engine.admit();
  const running = session.score([job]);
  running.catch(() => {});
  t.equal(binding.running(), 1);
  await t.rejects(
    (async () => {
      try {
        await session.score([{ ...job, prefix: new Int32Array(10_000) }]); // longer than a slot's context
      } finally {
        session.close();
      }
    })(),
    { code: 'invalid_request' },
  );
  t.equal(binding.running(), 0, 'the first round was cancelled');
  await t.rejects(running, CancelledError);
  t.equal(engine.stats().inflight, 0);
});

t.test('background work has its own session: not admitted, never refused, not budgeted', async (t) => {
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake', slots: 1, queue: 0 }, fakeBinding({ delayMs: 100 }));
  t.teardown(() => engine.close());
  const request = scoreRound(engine, [job]);
  const session = engine.background();
  t.ok(session.background);
  await session.score([job]);
  t.equal(session.budget.spent, 0, 'background slots: nothing charged');
  session.close();
  t.equal(engine.stats().refused, 0);
  await request;
});

t.test("a session's view without its signal is not cancelled with the request", async (t) => {
  const binding = fakeBinding({ delayMs: 200 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake' }, binding);
  t.teardown(() => engine.close());
  const controller = new AbortController();
  const session = engine.admit({ signal: controller.signal });
  const shared = session.withoutSignal().score([job]);
  const request = session.score([job]).finally(() => session.close());
  controller.abort();
  await t.rejects(request, CancelledError);
  await t.resolves(shared, "the shared job (a label set's prior) finishes for those waiting on it");
});

/** An engine on the fake binding with audio: capacity one, the speaker encoder slow. */
async function audioEngine(t: Test) {
  const binding = fakeBinding({ speakerDelayMs: 200 });
  const engine = await Engine.open({ ...SMALL, modelPath: 'fake', slots: 1, queue: 0 }, binding);
  const dir = mkdtempSync(join(tmpdir(), 'dm-speaker-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'fake.dmspkcam'), 'fake');
  await engine.loadWhisper('fake', '');
  await engine.loadSpeakerEncoder(join(dir, 'fake.dmspkcam'));
  return { binding, engine, transcription: new Transcription(engine, DEFAULTS) };
}

async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 5));
}

t.test('diarization is admitted: while it runs, a request beyond capacity gets overloaded', async (t) => {
  const { binding, engine, transcription } = await audioEngine(t);
  const session = engine.admit();
  const diarized = transcription.run(Buffer.from('audio'), true, session).finally(() => session.close());
  await until(() => binding.embeddings > 0);
  t.equal(engine.stats().inflight, 1, 'the transcription still holds its admission while speakers are embedded');
  await t.rejects(scoreRound(engine, [job]), { code: 'overloaded' });
  t.equal((await diarized).body.segments[0]!.speaker, 'SPEAKER_00');
  await t.resolves(scoreRound(engine, [job]), 'admitted again once diarization is done');
  await engine.close();
});

t.test('close waits for diarization', async (t) => {
  const { binding, engine, transcription } = await audioEngine(t);
  const session = engine.admit();
  const diarized = transcription.run(Buffer.from('audio'), true, session).finally(() => session.close());
  await until(() => binding.embeddings > 0);
  const started = performance.now();
  await engine.close();
  t.ok(performance.now() - started >= 150, 'close() returned only after the 200 ms of speaker embedding');
  t.same(
    (await diarized).body.segments[0]!.words.map((w) => w.speaker),
    ['SPEAKER_00', 'SPEAKER_00', 'SPEAKER_00', 'SPEAKER_00'],
    'and the request was answered',
  );
});
