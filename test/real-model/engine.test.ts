// The native addon on the real default model: scoring, shared prefill, cancellation, slots.
import t from 'tap';
import { Engine } from '../../src/engine/engine.js';
import { Answer } from '../../src/decisions/answer.js';
import { YesNo } from '../../src/decisions/yes-no.js';
import { loadBinding } from '../../src/binding.js';
import { CancelledError } from '../../src/errors.js';
import { longText, SMALL_LOAD, testModelPath } from '../helpers/model.js';
import { decide, scoreRound } from '../helpers/requests.js';

const modelPath = await testModelPath();
const engine = await Engine.open({
  modelPath,
  slots: 2,
  threads: 2,
  queue: 4,
  contextSize: 8192,
  batchSize: 512,
  promptCacheMiB: 64,
});
t.teardown(() => engine.close());
const yesNo = new YesNo(engine);
const text = 'The Eiffel Tower is in Paris. It was completed in 1889 and is made of wrought iron.';

t.test('obvious statements are judged correctly, probabilities from the model', async (t) => {
  const out = await decide(engine, yesNo, {
    text,
    statements: ['The tower is in Paris.', 'The tower is made of wood.'],
  });
  const [inParis, wooden] = (out.body as { results: { answer: boolean; probability: number }[] }).results;
  t.equal(inParis!.answer, true);
  t.equal(wooden!.answer, false);
  t.ok(inParis!.probability > 0.5 && inParis!.probability < 1);
  t.ok(wooden!.probability >= 0 && wooden!.probability < 0.5);
});

t.test('statements of one call share the prefill: the text is read (and billed) once', async (t) => {
  const tokens = async (statements: string[]) => (await decide(engine, yesNo, { text, statements })).inputTokens;
  const one = await tokens(['It is old.']);
  const two = await tokens(['It is old.', 'It is new.']);
  const three = await tokens(['It is old.', 'It is new.', 'It is new.']);
  t.equal(three - two, two - one, 'each statement adds the same tokens');
  t.ok(two - one < one / 2, 'and far fewer than the text and instructions');
});

t.test('a repeated prefix is reused from the slot cache, with the same answer', async (t) => {
  const one = await Engine.open({
    modelPath,
    slots: 1,
    threads: 2,
    queue: 0,
    contextSize: 1024,
    batchSize: 256,
    promptCacheMiB: 0,
  });
  t.teardown(() => one.close());
  const prefix = one.tokenize(`Context: ${text}`);
  const job = { prefix, branches: [one.tokenize(' Question?')], options: [one.tokenize(' Yes'), one.tokenize(' No')] };
  const share = (lp: Float32Array) => 1 / (1 + Math.exp(lp[1]! - lp[0]!));
  const [first] = await scoreRound(one, [job]);
  const [again] = await scoreRound(one, [job]);
  t.equal(first!.cachedTokens, 0);
  t.equal(again!.cachedTokens, prefix.length, 'nothing of the prefix decoded again');
  t.equal(again!.promptTokens, first!.promptTokens, 'billed the same');
  // Decoded in a different batch shape the numbers move in the last digits, not the answer.
  t.ok(Math.abs(share(again!.logprobs) - share(first!.logprobs)) < 0.02, 'same answer from the cache');
});

t.test('a prompt displaced by another is loaded back from host memory, with the same answer', async (t) => {
  // One slot, so the second job's prompt displaces the first's; only the instructions recur.
  const open = (promptCacheMiB: number) =>
    Engine.open({ modelPath, slots: 1, threads: 2, queue: 0, contextSize: 1024, batchSize: 256, promptCacheMiB });
  const cached = await open(64);
  const none = await open(0);
  t.teardown(() => Promise.all([cached.close(), none.close()]));
  const instructions = 'Decide whether the statement holds for the text. Answer Yes or No. '.repeat(3);
  const run = async (e: Engine, prompt: string) => {
    const job = {
      prefix: e.tokenize(prompt),
      branches: [e.tokenize(' Is it made of iron?')],
      options: [e.tokenize(' Yes'), e.tokenize(' No')],
    };
    const [r] = await scoreRound(e, [job]);
    return { cachedTokens: r!.cachedTokens, yes: 1 / (1 + Math.exp(r!.logprobs[1]! - r!.logprobs[0]!)) };
  };
  const other = 'Translate the text into French and keep its tone; names stay as they are. '.repeat(3) + text;
  const asked = `${instructions}Text: ${text}`;
  const displaced = [];
  for (const e of [cached, none]) {
    await run(e, `${instructions}Text: The bridge opened in 1932.`);
    await run(e, other);
    displaced.push(await run(e, asked));
  }
  const [fromMemory, prefilled] = displaced;
  const shared = cached.tokenize(instructions).length;
  t.ok(fromMemory!.cachedTokens >= shared, `the instructions (${shared} tokens) were not prefilled again`);
  t.equal(prefilled!.cachedTokens, 0, 'without the cache they are');
  const stats = cached.stats();
  t.equal(stats.promptCacheLoads, 1, 'one load, counted');
  t.equal(stats.promptCacheTokens, fromMemory!.cachedTokens);
  t.ok(stats.promptCachePrompts >= 1 && stats.promptCacheBytes > 0);
  t.ok(Math.abs(fromMemory!.yes - prefilled!.yes) < 0.02, 'same answer');
});

t.test('a text answered first is borrowed by a yes-no, not prefilled, with the same answer', async (t) => {
  // Two slots: the yes-no may run on either, and still finds the text the answer read (under
  // instructions of its own: classify shares the yes-no's reading, so it needs no borrowing).
  const open = (textReuse: 'on' | 'off') =>
    Engine.open({
      modelPath,
      slots: 2,
      threads: 1,
      queue: 0,
      contextSize: 2048,
      batchSize: 256,
      promptCacheMiB: 64,
      textReuse,
    });
  const long = `${text} ${'Its lift carries visitors to three platforms, the highest 276 metres above the ground. '.repeat(2)}`;
  const answers = [];
  for (const textReuse of ['on', 'off'] as const) {
    const e = await open(textReuse);
    t.teardown(() => e.close());
    const [answer, yesNo] = [new Answer(e), new YesNo(e)];
    const ask = (body: string) => decide(e, yesNo, { text: body, statement: 'The highest platform is 276 metres up.' });
    await ask('The bridge opened in 1932 and carries a railway over the river.'); // the yes-no instructions, once
    await decide(e, answer, { text: long, question: 'How high is the highest platform?' });
    const out = (await ask(long)).body as { answer: boolean; probability: number };
    answers.push({ ...out, stats: e.stats() });
  }
  const [borrowed, prefilled] = answers;
  t.equal(borrowed!.stats.promptCacheBorrows, 1, 'the yes-no borrowed the text');
  t.ok(borrowed!.stats.promptCacheBorrowedTokens >= engine.tokenize(long).length - 4, 'nearly all of it');
  t.equal(prefilled!.stats.promptCacheBorrows, 0, 'with reuse off it is prefilled');
  t.equal(borrowed!.answer, true);
  t.equal(prefilled!.answer, true);
  t.ok(
    Math.abs(borrowed!.probability - prefilled!.probability) < 0.05,
    `p ${borrowed!.probability} vs ${prefilled!.probability}`,
  );
});

t.test('multi-token options are scored by all their tokens', async (t) => {
  const prefix = engine.tokenize('The capital of France is');
  const [r] = await scoreRound(engine, [
    {
      prefix,
      branches: [engine.tokenize(' the city of')],
      options: [engine.tokenize(' Paris'), engine.tokenize(' Ouagadougou Burkina')],
    },
  ]);
  t.ok(r!.logprobs[0]! > r!.logprobs[1]!, 'Paris is far likelier');
});

t.test('aborting a running job frees its slot within a second', async (t) => {
  const controller = new AbortController();
  const long = {
    prefix: engine.tokenize(longText(4000)),
    branches: [engine.tokenize(' ok?')],
    options: [engine.tokenize(' Yes')],
  };
  const pending = scoreRound(engine, [long, long, long], controller.signal);
  await new Promise((r) => setTimeout(r, 300));
  t.ok(engine.stats().running > 0, 'slots busy');
  const aborted = performance.now();
  controller.abort();
  await t.rejects(pending, CancelledError);
  while (engine.stats().running > 0 || engine.stats().queued > 0) await new Promise((r) => setTimeout(r, 10));
  t.ok(performance.now() - aborted < 1000, 'slots free within a second');
});

t.test('the event loop keeps answering while every slot runs', async (t) => {
  const long = {
    prefix: engine.tokenize(longText(3000)),
    branches: [engine.tokenize(' ok?')],
    options: [engine.tokenize(' Yes')],
  };
  const busy = scoreRound(engine, [long, long]);
  let worstGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worstGap = Math.max(worstGap, now - last);
    last = now;
  }, 5);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(engine.stats().running, 2, 'both slots running');
  await busy;
  clearInterval(timer);
  t.ok(worstGap < 100, `timers kept firing (worst gap ${worstGap.toFixed(0)} ms)`);
});

t.test('bad jobs are refused by the addon, not crashed on', async (t) => {
  const native = new (loadBinding().Engine)();
  t.throws(() => native.tokenize('x', false, false), { code: 'not_loaded' });
  await native.load({ modelPath, ...SMALL_LOAD });
  t.throws(
    () =>
      native.submit({
        kind: 'score',
        prefix: Int32Array.of(-1),
        branches: [Int32Array.of(1)],
        options: [Int32Array.of(1)],
      }),
    /vocabulary/,
  );
  t.throws(
    () => native.submit({ kind: 'score', prefix: Int32Array.of(1), branches: [], options: [Int32Array.of(1)] }),
    /must be a non-empty array/,
  );
  t.throws(
    () =>
      native.submit({
        kind: 'score',
        prefix: Int32Array.of(1),
        branches: [new Int32Array(0)],
        options: [Int32Array.of(1)],
      }),
    /at least one token/,
  );
  const spans = {
    kind: 'spans' as const,
    prefix: Int32Array.of(1),
    branches: [Int32Array.of(1)],
    source: Int32Array.of(5, 6),
    stops: Int32Array.of(2),
    maxSpanTokens: 32,
    maxSpans: 1,
  };
  t.throws(() => native.submit({ ...spans, startTokens: Int32Array.of(7, 8) }), /startLengths must be an Int32Array/);
  t.throws(
    () =>
      native.submit({
        ...spans,
        startTokens: Int32Array.of(7, 8),
        startLengths: Int32Array.of(3),
        startPositions: Int32Array.of(0),
      }),
    /sum to the length/,
  );
  t.throws(
    () =>
      native.submit({
        ...spans,
        startTokens: Int32Array.of(7, 8),
        startLengths: Int32Array.of(2),
        startPositions: Int32Array.of(2),
      }),
    /must index job.source/,
  );
  t.throws(
    () =>
      native.submit({
        ...spans,
        startTokens: Int32Array.of(7, 8),
        startLengths: Int32Array.of(2),
        startPositions: Int32Array.of(1),
        startEnds: Int32Array.of(0),
      }),
    /startEnds must match job.startPositions/,
  );
  t.throws(
    () => native.submit({ ...spans, joinNext: Int32Array.of(1), minJoinLogprob: -2 }),
    /joinNext must have one flag per job.source token/,
  );
  t.throws(
    () => native.submit({ ...spans, closingTokens: Int32Array.of(1, -2) }),
    /closingTokens: token id out of the vocabulary/,
  );
  for (const key of ['separator', 'inlineSeparator', 'none']) {
    t.throws(() => native.submit({ ...spans, [key]: 1e9 }), new RegExp(`job\\.${key} must be an integer from -1 to`));
  }
  for (const key of ['branchMaxSpans', 'branchMaxSpanTokens']) {
    const perBranch = Int32Array.from(spans.branches, () => 1);
    t.throws(
      () => native.submit({ ...spans, [key]: Int32Array.of(...perBranch, 1) }),
      new RegExp(`job\\.${key} must hold one count >= 1 per branch`),
    );
    t.throws(
      () => native.submit({ ...spans, [key]: perBranch.map(() => 0) }),
      new RegExp(`job\\.${key} must hold one count >= 1 per branch`),
    );
  }
  const { result } = native.submit({
    kind: 'score',
    prefix: engine.tokenize(longText(400)),
    branches: [Int32Array.of(1)],
    options: [Int32Array.of(1)],
  });
  native.close();
  await t.rejects(result, { code: 'cancelled' }, 'close cancels pending work');
  await t.rejects(
    loadBinding().Engine.prototype.load.call(new (loadBinding().Engine)(), {
      modelPath: '/nonexistent.gguf',
      ...SMALL_LOAD,
    }),
    { code: 'load_failed' },
  );
});

t.test('a prompt larger than a slot is a 400, never a decode failure', async (t) => {
  const small = await Engine.open({
    modelPath,
    slots: 1,
    threads: 2,
    queue: 0,
    contextSize: 512,
    batchSize: 128,
    promptCacheMiB: 0,
  });
  t.teardown(() => small.close());
  await t.rejects(decide(small, new YesNo(small), { text: longText(2000), statement: 'ok' }), {
    code: 'invalid_request',
    message: /needs \d+ tokens of context but a slot holds 512/,
  });
});
