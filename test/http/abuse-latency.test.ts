// Abuse under load: hostile shapes sent to a running server (its own process, the full gated stack over
// the fake binding) while a second client asks for `GET /` and a small decision every 100 ms.
// Every hostile request must end in a 4xx envelope, the process must live, and the worst `GET /`
// while they run may exceed the worst of a quiet period just before by at most WORST_GAP_MS
// (README "Limits"): on a machine shared with other work the quiet figure is far from zero.
import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const WORST_GAP_MS = 50;
const api = '/v1/decision-machine-1';
const chat = '/v1/chat/completions';
const MODEL = 'decision-machine-1';

// A nested object under each prototype name, at the top and one level down.
const hostileProperties = Object.fromEntries(
  ['__proto__', 'constructor', 'prototype'].map((k) => [
    k,
    {
      type: 'object',
      properties: { x: { type: 'string' }, [k]: { type: 'object', properties: { y: { type: 'string' } } } },
    },
  ]),
);
// Object.fromEntries and spread define own keys: `__proto__` is serialised as a key like any other.
const schema = JSON.stringify({ type: 'object', properties: { name: { type: 'string' }, ...hostileProperties } });
const enumOf = (n: number) =>
  JSON.stringify({
    type: 'object',
    properties: { k: { type: 'string', enum: Array.from({ length: n }, (_, i) => `value ${i}`) } },
  });

/**
 * [route, raw JSON body, what the probe found]: every one must be answered with a status under 500 and an envelope when
 * 4xx.
 */
const HOSTILE: [string, string, string][] = [
  [`${api}/extract`, `{"text":"Sam Ortiz, 2 adults.","schema":${schema}}`, 'prototype keys in an extract schema'],
  [
    `${api}/extract`,
    '{"text":"Sam Ortiz, 2 adults.","schema":{"type":"object","properties":{"__proto__":{"type":"object","properties":{"x":{"type":"string"}}}}}}',
    'the 150-byte request of the probe',
  ],
  [
    chat,
    `{"model":"${MODEL}","messages":[{"role":"user","content":"Sam"}],"response_format":{"type":"json_schema","json_schema":{"schema":${schema}}}}`,
    'prototype keys in chat json_schema',
  ],
  [
    chat,
    `{"model":"${MODEL}","messages":[{"role":"user","content":"Sam"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}},{"type":"function","function":{"name":"constructor","parameters":${schema}}}]}`,
    'prototype keys in tool parameters',
  ],
  [
    `${api}/classify`,
    '{"text":"x","labels":{"__proto__":"a","constructor":"b","prototype":"c"}}',
    'prototype keys as labels',
  ],
  [
    `${api}/classify-tree`,
    '{"text":"x","tree":{"__proto__":{"labels":{"constructor":"c","prototype":"p"}},"toString":"t"}}',
    'prototype keys in a tree',
  ],
  [`${api}/entities`, '{"text":"x","types":{"__proto__":"a","constructor":"b"}}', 'prototype keys as entity types'],
  [`${api}/extract`, `{"text":"x","schema":${enumOf(100_000)}}`, 'an enum of 100,000 values'],
  [
    chat,
    `{"model":"${MODEL}","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":${enumOf(100_000)}}}}`,
    'the same enum through chat',
  ],
  [
    `${api}/extract`,
    `{"text":"x","schema":{"type":"object","properties":{${Array.from({ length: 20_000 }, (_, i) => `"p${i}":{"type":"string"}`).join(',')}}}}`,
    '20,000 properties',
  ],
  [
    `${api}/yes-no`,
    JSON.stringify({
      texts: Array.from({ length: 32 }, (_, i) => `t${i}`),
      statements: Array.from({ length: 32 }, (_, i) => `s${i}`),
    }),
    '32 texts x 32 statements',
  ],
  [`${api}/classify`, JSON.stringify({ text: 'x', labels: ['a'.repeat(20_001), 'b'] }), 'a 20,001-character label'],
  [
    `${api}/entities`,
    JSON.stringify({
      text: 'x',
      types: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`type ${i}`, 'd'.repeat(2000)])),
    }),
    '64 entity types with long descriptions',
  ],
  [`${api}/classify`, '{"text":"x","labels":{"\\ud800":"x","b":"y"}}', 'a lone surrogate in a key'],
  [
    chat,
    JSON.stringify({ model: 'm'.repeat(100_000), messages: [{ role: 'user', content: 'x' }] }),
    'a 100,000-character model id',
  ],
];

t.test('hostile shapes never end the process nor stall GET /', async (t) => {
  const child = fileURLToPath(new URL('../helpers/gated-child.js', import.meta.url));
  const proc = spawn(process.execPath, [child], {
    env: { ...process.env, DM_AUTH: 'off', DM_RATE_LIMIT: '0', DM_QUEUE: '64' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => proc.kill('SIGKILL'));
  const url = await new Promise<string>((resolve) => createInterface({ input: proc.stdout! }).once('line', resolve));
  let exited = false;
  proc.on('exit', () => (exited = true));

  // The watcher: GET / and a small decision every 100 ms, each timed on its own.
  const gaps: number[] = [];
  const decisions: number[] = [];
  const statuses: number[] = [];
  const timed = async (path: string, init: RequestInit, into: number[]) => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, init);
    await res.arrayBuffer();
    into.push(performance.now() - started);
    statuses.push(res.status);
  };
  let watching = true;
  const watch = async () => {
    while (watching) {
      await Promise.all([
        timed('/', {}, gaps),
        timed(`${api}/yes-no`, { method: 'POST', body: '{"text":"a","statement":"b"}' }, decisions),
      ]);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let watcher = watch();
  await new Promise((r) => setTimeout(r, 2000));
  watching = false;
  await watcher;
  const quiet = Math.max(...gaps);
  gaps.length = 0;
  watching = true;
  watcher = watch();

  for (const [route, body, what] of HOSTILE) {
    const started = performance.now();
    const res = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'bad id; <script>' },
      body,
    });
    const text = await res.text();
    const ms = performance.now() - started;
    t.ok(res.status < 500, `${what}: ${res.status} in ${Math.round(ms)} ms`);
    if (res.status >= 400)
      t.match(JSON.parse(text), { error: { code: String, message: String } }, `${what}: the error envelope`);
    t.ok(text.length < 2000, `${what}: a short reply (${text.length} characters)`);
    t.not(res.headers.get('x-request-id'), 'bad id; <script>', `${what}: a malformed x-request-id is not kept`);
  }
  watching = false;
  await watcher;

  t.notOk(exited, 'the server process is alive');
  const root = await fetch(`${url}/`);
  t.equal(root.status, 200, 'and answers');
  t.ok(
    statuses.every((s) => s === 200),
    'every watcher request answered 200',
  );
  const worst = Math.max(...gaps);
  t.ok(
    worst - quiet <= WORST_GAP_MS,
    `worst GET / while hostile requests ran: ${worst.toFixed(1)} ms, quiet before: ${quiet.toFixed(1)} ms (may add ${WORST_GAP_MS}), ${gaps.length} samples`,
  );
  t.comment(`small decision (fake model, 20 ms a job): worst ${Math.max(...decisions).toFixed(1)} ms`);
});
