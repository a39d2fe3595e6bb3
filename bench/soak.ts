// Memory under sustained use: C clients send small real decisions (yes-no, classify, extract),
// bad bodies, and requests they abandon mid-inference, through the HTTP front of a running
// service for M minutes, while the service's resident memory is sampled every 15 s. Prints one
// JSON line: the RSS growth after warm-up as a least-squares slope in MB per 10 minutes.
//
//   node dist/bench/soak.js --url http://127.0.0.1:19310 --pid <service pid> --minutes 20 --warmup 5
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { post, SMALL_DECISIONS } from './harness.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    pid: { type: 'string' },
    minutes: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    clients: { type: 'string', default: '2' },
  },
});
if (!values.pid) throw new Error('--pid: the service process to sample');
const api = `${values.url}/v1/decision-machine-1`;
const end = performance.now() + Number(values.minutes) * 60_000;
const warmup = Number(values.warmup) * 60_000;

// The decisions of the retry storm, and one malformed body (a 400 must not leak either).
const MIX: [string, unknown][] = [...SMALL_DECISIONS, ['yes-no', '{"text": "unterminated']];

const statuses = new Map<string, number>();
const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);

async function client(k: number): Promise<void> {
  for (let i = k; performance.now() < end; i++) {
    const [name, body] = MIX[i % MIX.length]!;
    // Every seventh request is abandoned after 200 ms: its slot must come back.
    const signal = i % 7 === 0 ? AbortSignal.timeout(200) : undefined;
    try {
      count(String((await post(`${api}/${name}`, body, { ok: false, signal })).status));
    } catch {
      count('abandoned');
    }
  }
}

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${values.pid}/status`, 'utf8'))![1]) / 1024;
const started = performance.now();
const samples: [number, number][] = []; // minutes since start, MB
const sampler = setInterval(() => samples.push([(performance.now() - started) / 60_000, rssMb()]), 15_000);
await Promise.all(Array.from({ length: Number(values.clients) }, (_, k) => client(k)));
clearInterval(sampler);

const after = samples.filter(([m]) => m * 60_000 >= warmup);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mx = mean(after.map(([m]) => m));
const my = mean(after.map(([, r]) => r));
const slope = after.reduce((a, [m, r]) => a + (m - mx) * (r - my), 0) / after.reduce((a, [m]) => a + (m - mx) ** 2, 0);
console.log(
  JSON.stringify({
    minutes: Number(values.minutes),
    warmupMinutes: Number(values.warmup),
    statuses: Object.fromEntries(statuses),
    rssMb: {
      first: samples[0]?.[1],
      afterWarmup: after[0]?.[1],
      last: samples.at(-1)?.[1],
      max: Math.max(...samples.map(([, r]) => r)),
    },
    growthMbPer10Min: Math.round(slope * 10 * 100) / 100,
  }),
);
