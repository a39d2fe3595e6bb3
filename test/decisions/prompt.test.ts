// Prompt.choices: options are cut after the first token that tells each apart from the others.
import t from 'tap';
import type { Engine } from '../../src/engine/engine.js';
import { Prompt } from '../../src/decisions/prompt.js';

// A tokenizer with one token per word, enough to see where options are cut.
const ids = new Map<string, number>();
const engine = {
  chat: (messages: { content: string }[]) => messages.map((m) => `<${m.content}>`).join(''),
  tokenize: (text: string) =>
    Int32Array.from(text.split(/(?= )/).filter(Boolean), (w) => ids.get(w) ?? ids.set(w, ids.size).get(w)!),
} as unknown as Engine;
const prompt = new Prompt(engine, 'system');
const words = (options: Int32Array[]) => options.map((o) => o.length);

t.test('an option whose first token is its own keeps only that token', async (t) => {
  t.same(words(prompt.choices(['refund request', 'technical problem', 'billing'])), [1, 1, 1]);
});

t.test('options that begin alike keep the tokens up to where they part', async (t) => {
  t.same(words(prompt.choices(['account access now', 'account deletion now', 'account deletion later'])), [2, 3, 3]);
});

t.test('an option that begins another keeps every token', async (t) => {
  t.same(words(prompt.choices(['sport', 'sport news', 'weather'])), [1, 2, 1]);
});
