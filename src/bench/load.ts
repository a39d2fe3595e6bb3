// The load of one repetition: `concurrency` clients in a closed loop, each sending its next
// request as soon as its last is answered, until the repetition's requests are sent (or its
// duration is over) and every answer is in. Only answered requests (200) count as requests,
// decisions and latencies; 529s and other failures are counted apart.

/** What one request came back with. */
export interface Outcome {
  status: number;
  /** Input tokens the target read (x-input-tokens), for a 200. */
  inputTokens: number;
  /** The error's first characters, for a status other than 200 and 529. */
  error?: string;
}

/** A request ready to send: the timed part only (anything prepared is done before). */
export type Send = () => Promise<Outcome>;

export interface Measurement {
  seconds: number;
  requests: number;
  decisions: number;
  inputTokens: number;
  latenciesMs: number[];
  refused: number;
  errors: number;
  firstError?: string;
}

export type Stop = { requests: number } | { seconds: number };

/** Runs the closed loop; `next` prepares each request and says how many decisions it asks. */
export async function closedLoop(
  next: () => Promise<{ send: Send; decisions: number }>,
  concurrency: number,
  stop: Stop,
): Promise<Measurement> {
  const m: Measurement = {
    seconds: 0,
    requests: 0,
    decisions: 0,
    inputTokens: 0,
    latenciesMs: [],
    refused: 0,
    errors: 0,
  };
  const started = performance.now();
  const deadline = 'seconds' in stop ? started + stop.seconds * 1000 : Infinity;
  let issued = 0;
  const more = () => ('requests' in stop ? issued < stop.requests : performance.now() < deadline);
  const client = async () => {
    while (more()) {
      issued++;
      const { send, decisions } = await next();
      const sent = performance.now();
      const outcome = await send().catch((err: Error): Outcome => ({ status: 0, inputTokens: 0, error: err.message }));
      const ms = performance.now() - sent;
      if (outcome.status === 200) {
        m.requests++;
        m.decisions += decisions;
        m.inputTokens += outcome.inputTokens;
        m.latenciesMs.push(ms);
      } else if (outcome.status === 529) m.refused++;
      else {
        m.errors++;
        m.firstError ??= `${outcome.status || 'no answer'}: ${outcome.error ?? ''}`.slice(0, 300);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  m.seconds = (performance.now() - started) / 1000;
  return m;
}

/** A POST of a JSON body to a decision-machine route. */
export function post(url: string, headers: Record<string, string>, body: string): Send {
  return async () => {
    const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
    const text = await res.text();
    return {
      status: res.status,
      inputTokens: Number(res.headers.get('x-input-tokens') ?? 0),
      ...(res.status === 200 || res.status === 529 ? {} : { error: text.slice(0, 200) }),
    };
  };
}
