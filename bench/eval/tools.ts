// Function calling through the chat facade with the official `openai` client: tool choice and
// argument accuracy on bench/eval/tool-calls.jsonl, and latency. Prints a table, writes its run into
// bench/results/tools.json.
//
//   node dist/bench/eval/tools.js
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { recordRun, ROOT as root, serveService } from '../harness.js';

interface Case {
  id: string;
  tools: OpenAI.Chat.Completions.ChatCompletionTool[];
  message: string;
  expect: { tool: string; arguments: Record<string, unknown> };
}

const cases = readFileSync(`${root}bench/eval/tool-calls.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Case);

const config = loadConfig(process.env, { port: 0, logLevel: 'silent' });
const server = await serveService(await openService(config), config);
const client = new OpenAI({ apiKey: 'local', baseURL: `${server.url}/v1`, maxRetries: 0 });

const same = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string'
    ? a.trim().toLowerCase() === b.trim().toLowerCase()
    : JSON.stringify(a) === JSON.stringify(b);

let toolsRight = 0;
let fields = 0;
let fieldsRight = 0;
const ms: number[] = [];
const misses: string[] = [];
for (const c of cases) {
  const started = performance.now();
  const res = await client.chat.completions.create({
    model: 'decision-machine-1',
    messages: [{ role: 'user', content: c.message }],
    tools: c.tools,
  });
  ms.push(performance.now() - started);
  const call = res.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
  const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
  if (call.function.name === c.expect.tool) toolsRight++;
  else misses.push(`${c.id}: tool ${call.function.name}, want ${c.expect.tool}`);
  for (const [k, v] of Object.entries(c.expect.arguments)) {
    fields++;
    if (call.function.name === c.expect.tool && same(args[k], v)) fieldsRight++;
    else misses.push(`${c.id}: ${k}=${JSON.stringify(args[k])}, want ${JSON.stringify(v)}`);
  }
}
await server.close();

const p50 = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
const report = {
  cases: cases.length,
  toolChoice: toolsRight / cases.length,
  argumentFields: fieldsRight / fields,
  fields,
  p50Ms: p50,
  misses,
};
console.log(`| function calling (${cases.length} cases, 3 tools each) | |\n|---|---|`);
console.log(`| right tool | ${(report.toolChoice * 100).toFixed(1)}% |`);
console.log(`| right argument fields | ${(report.argumentFields * 100).toFixed(1)}% of ${fields} |`);
console.log(`| p50 latency | ${p50.toFixed(0)} ms |`);
for (const m of misses) console.log(`  miss ${m}`);
recordRun('tools', report);
