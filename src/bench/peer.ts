// How a llama-server user would ask the service's yes-no and classify decisions: the service's
// own instructions and layout as chat messages (rendered by the peer's /apply-template), one
// `/completion` per decision with `n_predict: 1` and `n_probs`, read as Yes against No (any case)
// or, for each label, the probability of the top tokens that begin its name (labels that share a
// first token cannot be told apart this way).
import type { Outcome, Send } from './load.js';

export type PeerCapability = 'yes-no' | 'classify';
export type Labels = string[] | Record<string, string>;

const YES_NO =
  'You check statements against a text. Answer Yes if the text says or clearly implies that the ' +
  'statement is true, otherwise answer No. Reply with one word: Yes or No.';
const CLASSIFY =
  'You classify texts. Choose the one label that best describes what the text is: its purpose or topic. ' +
  'When several labels could apply, choose the most specific one. Reply with the label exactly as written, nothing else.';

export const labelsOf = (l: Labels): [string, string | undefined][] =>
  Array.isArray(l) ? l.map((n) => [n, undefined]) : Object.entries(l).map(([n, d]) => [n, d || undefined]);

/** The chat messages of one decision: a statement about a text, or labels for a text. */
export function peerMessages(
  cap: PeerCapability,
  text: string,
  asked: { statement?: string; labels?: Labels },
): { role: string; content: string }[] {
  if (cap === 'yes-no')
    return [
      { role: 'system', content: YES_NO },
      { role: 'user', content: `Text: ${text}\n\nStatement: ${asked.statement}` },
    ];
  const list = labelsOf(asked.labels!)
    .map(([n, d]) => (d ? `- ${n}: ${d}` : `- ${n}`))
    .join('\n');
  return [
    { role: 'system', content: CLASSIFY },
    { role: 'user', content: `Text: ${text}\n\nLabels:\n${list}\n\nThe best label:` },
  ];
}

export type Top = { token: string; logprob: number }[];

/** The peer's decision from the first token's top probabilities: "true"/"false", or a label. */
export function peerDecision(cap: PeerCapability, top: Top, labels?: Labels): string {
  const p = (match: (t: string) => boolean) =>
    top.filter((t) => match(t.token.trim().toLowerCase())).reduce((s, t) => s + Math.exp(t.logprob), 0);
  if (cap === 'yes-no') return String(p((t) => t === 'yes') >= p((t) => t === 'no'));
  let best = '';
  let bestP = -1;
  for (const [name] of labelsOf(labels!)) {
    const q = p((t) => t.length > 0 && name.toLowerCase().startsWith(t));
    if (q > bestP) [best, bestP] = [name, q];
  }
  return best;
}

/** The `/completion` body of one rendered prompt. */
export function completionBody(cap: PeerCapability, prompt: string): Record<string, unknown> {
  return { prompt, n_predict: 1, n_probs: cap === 'yes-no' ? 20 : 50, temperature: 0, cache_prompt: true };
}

/** The prompt llama-server's own chat template makes of `messages`. */
export async function renderPrompt(url: string, messages: { role: string; content: string }[]): Promise<string> {
  const res = await fetch(`${url}/apply-template`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages }),
  });
  if (res.status !== 200) throw new Error(`${url}/apply-template: status ${res.status}`);
  return ((await res.json()) as { prompt: string }).prompt;
}

/**
 * A service request (yes-no or classify, single or batch form) as a llama-server user sends it:
 * every decision its own rendered prompt, all sent at once. Rendering happens here, before the
 * returned Send is timed.
 */
export async function peerRequest(
  url: string,
  cap: PeerCapability,
  body: Record<string, unknown>,
): Promise<{ send: Send; decisions: number }> {
  const texts = [...(typeof body.text === 'string' ? [body.text] : []), ...((body.texts as string[]) ?? [])];
  const asked: { statement?: string; labels?: Labels }[] =
    cap === 'classify'
      ? [{ labels: body.labels as Labels }]
      : [...(typeof body.statement === 'string' ? [body.statement] : []), ...((body.statements as string[]) ?? [])].map(
          (statement) => ({ statement }),
        );
  const prompts = await Promise.all(
    texts.flatMap((text) => asked.map((a) => renderPrompt(url, peerMessages(cap, text, a)))),
  );
  const send: Send = async () => {
    const outcomes = await Promise.all(
      prompts.map(async (prompt): Promise<Outcome> => {
        const res = await fetch(`${url}/completion`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(completionBody(cap, prompt)),
        });
        const json = (await res.json()) as { tokens_evaluated?: number };
        return {
          status: res.status,
          inputTokens: json.tokens_evaluated ?? 0,
          ...(res.status === 200 ? {} : { error: JSON.stringify(json).slice(0, 200) }),
        };
      }),
    );
    const failed = outcomes.find((o) => o.status !== 200);
    return failed ?? { status: 200, inputTokens: outcomes.reduce((s, o) => s + o.inputTokens, 0) };
  };
  return { send, decisions: prompts.length };
}
