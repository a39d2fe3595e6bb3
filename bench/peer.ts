// The peer, side by side: what a user would run instead is llama.cpp's llama-server on the same
// GGUF, asking the same question and reading the probabilities of the first answer token
// (`/completion`, `n_predict: 1`, `n_probs`). Both answer the same yes-no and classify items of
// the development set with short texts, called alternately (so shared-CPU noise hits both alike),
// with the same slots, threads, context and batch. Prints p50 latency and accuracy of both, the
// ratio of the p50s and the median of the per-item ratios (each item timed on both sides back to
// back, so it moves less with the machine's load); writes its run into bench/results/peer.json and
// docs/peer.svg.
//
//   node dist/bench/peer.js [--items 40] [--port 18600] [--eval ../shared/eval] [--min-chars 150] [--max-chars 450]
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { resolveModel } from '../src/models/store.js';
import { percentile } from '../src/bench/stats.js';
import { post as timedPost, recordRun, ROOT as root, serveInProcess } from './harness.js';
import { ensureLlamaServer, startLlamaServer } from '../src/bench/llama-server.js';
import { completionBody, peerDecision, peerMessages, renderPrompt, type Labels } from '../src/bench/peer.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '40' },
    port: { type: 'string', default: '18600' },
    eval: { type: 'string', default: `${root}../shared/eval` },
    'min-chars': { type: 'string', default: '150' },
    'max-chars': { type: 'string', default: '450' },
  },
});
const perCapability = Number(values.items);
const port = Number(values.port);

interface Item {
  id: string;
  set?: string;
  cap: 'yes-no' | 'classify';
  req: { text: string; statement?: string; labels?: Labels };
  expect: { answer?: boolean; label?: string };
}

// Items with one short text and one question, taken in turn from each set so no set dominates.
function items(cap: Item['cap'], count: number): Item[] {
  const files = ['dev-decisions.jsonl', 'pool-dev.jsonl', 'external/dev.jsonl'].map((f) => `${values.eval}/${f}`);
  const fits = (c: Item) =>
    c.cap === cap &&
    typeof c.req.text === 'string' &&
    c.req.text.length >= Number(values['min-chars']) &&
    c.req.text.length <= Number(values['max-chars']) &&
    (cap === 'yes-no'
      ? typeof c.req.statement === 'string' && Object.keys(c.req).length === 2 && typeof c.expect.answer === 'boolean'
      : c.req.labels !== undefined && typeof c.expect.label === 'string');
  const bySet = new Map<string, Item[]>();
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const c = JSON.parse(line) as Item;
      if (!fits(c)) continue;
      const set = c.set ?? file;
      bySet.set(set, [...(bySet.get(set) ?? []), c]);
    }
  }
  const out: Item[] = [];
  for (let i = 0; out.length < count && [...bySet.values()].some((s) => i < s.length); i++) {
    for (const s of bySet.values()) if (i < s.length && out.length < count) out.push(s[i]!);
  }
  return out;
}

// The peer's binary first (a long build the first time), then the service, in process, over HTTP.
const peerBin = ensureLlamaServer();
const config = loadConfig(process.env, { port: port + 1, logLevel: 'silent' });
const modelPath = await resolveModel(config.model, { path: config.modelPath });
const server = await serveInProcess({ ...config, modelPath });
const { service } = server;
const serviceUrl = `${server.url}/v1/decision-machine-1`;

// The peer: same file, same slots x threads, context and batch.
const peer = await startLlamaServer(peerBin, {
  model: modelPath,
  port,
  threads: config.threads,
  slots: config.slots,
  contextPerSlot: config.contextSize,
  batch: config.batchSize,
});

const post = async (url: string, body: unknown): Promise<any> => (await timedPost(url, body)).json();

const gold = (item: Item) => (item.cap === 'yes-no' ? String(item.expect.answer) : item.expect.label!);

async function askService(item: Item): Promise<{ ms: number; got: string }> {
  const started = performance.now();
  const out = await post(`${serviceUrl}/${item.cap}`, item.req);
  return { ms: performance.now() - started, got: item.cap === 'yes-no' ? String(out.answer) : out.label };
}

async function askPeer(item: Item, prompt: string): Promise<{ ms: number; got: string }> {
  const started = performance.now();
  const out = await post(`${peer.url}/completion`, completionBody(item.cap, prompt));
  const top = out.completion_probabilities[0].top_logprobs;
  return { ms: performance.now() - started, got: peerDecision(item.cap, top, item.req.labels) };
}

const p50 = (xs: number[]) => percentile(xs, 50);
const report: Record<string, unknown> = {
  model: service.engine.info.description,
  modelPath,
  slots: config.slots,
  threads: config.threads,
  note: 'both sides called alternately, one request at a time, after two warm-up calls each',
};
const rows: {
  cap: string;
  n: number;
  service: { p50Ms: number; accuracy: number; ms: number[] };
  peer: { p50Ms: number; accuracy: number; ms: number[] };
  ratio: number;
  pairedRatio: number;
}[] = [];
try {
  for (const cap of ['yes-no', 'classify'] as const) {
    // The peer's chat template, rendered by the peer itself, outside the timed call.
    const render = (it: Item) => renderPrompt(peer.url, peerMessages(it.cap, it.req.text, it.req));
    const [warm1, warm2, ...list] = items(cap, perCapability + 2);
    for (const w of [warm1!, warm2!]) {
      await askService(w); // each side's slots learn the instructions once, on texts not measured
      await askPeer(w, await render(w));
    }
    const prompts = await Promise.all(list.map(render));
    const s = { ms: [] as number[], ok: 0 };
    const q = { ms: [] as number[], ok: 0 };
    for (const [i, item] of list.entries()) {
      const order = i % 2 === 0 ? ['service', 'peer'] : ['peer', 'service'];
      for (const who of order) {
        const r = who === 'service' ? await askService(item) : await askPeer(item, prompts[i]!);
        const side = who === 'service' ? s : q;
        side.ms.push(r.ms);
        if (r.got === gold(item)) side.ok++;
      }
    }
    const service = { p50Ms: p50(s.ms), accuracy: s.ok / list.length, ms: s.ms.map(Math.round) };
    const peerSide = { p50Ms: p50(q.ms), accuracy: q.ok / list.length, ms: q.ms.map(Math.round) };
    const paired = p50(s.ms.map((ms, i) => ms / q.ms[i]!));
    rows.push({
      cap,
      n: list.length,
      service,
      peer: peerSide,
      ratio: service.p50Ms / peerSide.p50Ms,
      pairedRatio: paired,
    });
  }
} finally {
  peer.stop();
  await server.close();
}
report.capabilities = rows;

console.log(
  `| ${report.model}, ${config.slots} slots x ${config.threads} threads | items | service p50 | llama-server p50 | service / llama-server | per item, median | service accuracy | llama-server accuracy |`,
);
console.log('|---|---|---|---|---|---|---|---|');
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
for (const r of rows)
  console.log(
    `| ${r.cap} | ${r.n} | ${r.service.p50Ms.toFixed(0)} ms | ${r.peer.p50Ms.toFixed(0)} ms | ${r.ratio.toFixed(2)}x | ${r.pairedRatio.toFixed(2)}x | ${pct(r.service.accuracy)} | ${pct(r.peer.accuracy)} |`,
  );
recordRun('peer', report);
writeFileSync(`${root}docs/peer.svg`, chart(rows));

/** Grouped bars: p50 latency of both per capability, accuracy written on each bar. */
function chart(data: typeof rows): string {
  const w = 520;
  const h = 240;
  const top = Math.max(...data.flatMap((r) => [r.service.p50Ms, r.peer.p50Ms]));
  const scale = (ms: number) => (ms / top) * 130;
  const bars = data.flatMap((r, g) =>
    (
      [
        ['service', r.service, '#2b6cb0'],
        ['llama-server', r.peer, '#a0aec0'],
      ] as const
    )
      .map(([name, v, color], k) => {
        const x = 70 + g * 220 + k * 80;
        const y = 190 - scale(v.p50Ms);
        return (
          `<rect x="${x}" y="${y.toFixed(1)}" width="70" height="${scale(v.p50Ms).toFixed(1)}" fill="${color}"/>` +
          `<text x="${x + 35}" y="${(y - 18).toFixed(1)}" text-anchor="middle">${v.p50Ms.toFixed(0)} ms</text>` +
          `<text x="${x + 35}" y="${(y - 5).toFixed(1)}" text-anchor="middle" fill="#4a5568">${pct(v.accuracy)}</text>` +
          `<text x="${x + 35}" y="205" text-anchor="middle">${name}</text>`
        );
      })
      .concat(
        `<text x="${145 + g * 220}" y="225" text-anchor="middle" font-weight="bold">${r.cap} (${r.n} items)</text>`,
      ),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="18" font-weight="bold">p50 latency (bar) and accuracy, same GGUF, same slots and threads</text>`,
    `<line x1="60" y1="190" x2="${w - 10}" y2="190" stroke="#333"/>`,
    ...bars,
    '</svg>',
    '',
  ].join('\n');
}
