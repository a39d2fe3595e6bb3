// Goodput under a retry storm: C clients on loopback send a mix of small real decisions
// (yes-no, classify, extract) to a running service; a 529 is retried either at once (`--retry
// storm`) or after 0.5 s (`--retry backoff`). Counts answers by status and the 200s' latency
// (first attempt to 200). Runs for a fixed time; prints one JSON line.
//
//   node dist/bench/retry-storm.js --url http://127.0.0.1:18200 --seconds 90 --clients 16 --retry storm
import { parseArgs } from 'node:util';
import { percentile } from '../src/bench/stats.js';
import { post, SMALL_DECISIONS } from './harness.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    seconds: { type: 'string', default: '90' },
    clients: { type: 'string', default: '16' },
    retry: { type: 'string', default: 'storm' },
  },
});
const seconds = Number(values.seconds);
const backoffMs = values.retry === 'backoff' ? 500 : 0;
const api = `${values.url}/v1/decision-machine-1`;

const MIX = SMALL_DECISIONS;

const statuses = new Map<number, number>();
const latencies: number[] = [];
const deadline = performance.now() + seconds * 1000;

async function client(k: number): Promise<void> {
  for (let i = k; performance.now() < deadline; i++) {
    const [name, body] = MIX[i % MIX.length]!;
    const first = performance.now();
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      let status: number;
      try {
        ({ status } = await post(`${api}/${name}`, body, { ok: false, signal: AbortSignal.timeout(Math.ceil(left)) }));
      } catch {
        return; // the run ended while this request was in flight: not counted
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status !== 529) {
        if (status === 200) latencies.push(performance.now() - first);
        break;
      }
      if (backoffMs) await new Promise((r) => setTimeout(r, backoffMs));
    }
  }
}

await Promise.all(Array.from({ length: Number(values.clients) }, (_, k) => client(k)));
const ok = statuses.get(200) ?? 0;
console.log(
  JSON.stringify({
    retry: values.retry,
    clients: Number(values.clients),
    seconds,
    statuses: Object.fromEntries(statuses),
    okPerSecond: Math.round((ok / seconds) * 100) / 100,
    p50ms: latencies.length === 0 ? 0 : Math.round(percentile(latencies, 50)),
    p99ms: latencies.length === 0 ? 0 : Math.round(percentile(latencies, 99)),
  }),
);
