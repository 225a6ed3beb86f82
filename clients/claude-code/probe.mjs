// Measures one rule of the real Claude Code CLI: a small server that gives
// every /v1/messages request the same failure, and one headless `claude -p`
// pointed at it. It prints each request's time, model and the wait before
// it, then the CLI's exit status and result. docs/policies.md cites the
// runs ("measured against 2.1.328").
//
//   node clients/claude-code/probe.mjs STATUS [flags] [-- claude flags]
//     STATUS                 529, 500, 503, 429, ... or "stream" (HTTP 200,
//                            then an overloaded_error event mid-stream; a
//                            request that does not stream gets a 529)
//     --retry-after S        send retry-after: S
//     --should-retry V       send x-should-retry: V
//     --spend-limit          a 429 whose body says a spend limit was reached
//     --max-retries N        CLAUDE_CODE_MAX_RETRIES=N
//     --ok-after N           answer the request after N failures with 200
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const split = args.indexOf('--');
const own = split < 0 ? args : args.slice(0, split);
const claudeFlags = split < 0 ? [] : args.slice(split + 1);
const status = own[0];
const flag = (name) => {
  const i = own.indexOf(name);
  return i < 0 ? undefined : own[i + 1];
};
if (!status) {
  console.error('usage: probe.mjs STATUS|stream [--retry-after S] [--should-retry V] [--spend-limit] [--max-retries N] [--ok-after N] [-- claude flags]');
  process.exit(2);
}

const errorType = { 429: 'rate_limit_error', 500: 'api_error', 503: 'overloaded_error', 529: 'overloaded_error' };
const okAfter = flag('--ok-after') === undefined ? Infinity : Number(flag('--ok-after'));
const log = [];
const t0 = Date.now();
let first;

function message(model) {
  return { id: 'msg_probe', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    let parsed = {};
    try { parsed = JSON.parse(body); } catch { /* not JSON */ }
    const now = Date.now();
    first ??= now;
    const prev = log.at(-1);
    log.push({ t: now, url: req.url, model: parsed.model, stream: parsed.stream === true,
      wait: prev ? now - prev.end : 0 });
    const entry = log.at(-1);
    const done = () => { entry.end = Date.now(); };
    res.on('finish', done);
    if (!req.url.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'probe' } }));
      return;
    }
    const m = message(parsed.model);
    if (log.filter((e) => e.url.startsWith('/v1/messages')).length > okAfter) {
      if (!parsed.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(m));
        return;
      }
      sse(res, [['message_start', { type: 'message_start', message: { ...m, content: [], stop_reason: null } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }],
        ['message_stop', { type: 'message_stop' }]]);
      return;
    }
    if (status === 'stream' && parsed.stream) {
      sse(res, [['message_start', { type: 'message_start', message: { ...m, content: [], stop_reason: null } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half an ans' } }],
        ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]);
      return;
    }
    // A request that does not stream gets the capacity failure as a 529.
    const code = status === 'stream' ? 529 : Number(status);
    const headers = { 'content-type': 'application/json' };
    if (flag('--retry-after') !== undefined) headers['retry-after'] = flag('--retry-after');
    if (flag('--should-retry') !== undefined) headers['x-should-retry'] = flag('--should-retry');
    const error = { type: errorType[code] ?? 'api_error', message: 'probe' };
    if (own.includes('--spend-limit')) error.details = { error_code: 'enforced_spend_limit_reached' };
    res.writeHead(code, headers);
    res.end(JSON.stringify({ type: 'error', error }));
  });
});

server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const env = { ...process.env, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-probe',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1',
    HOME: mkdtempSync(join(tmpdir(), 'claude-probe-')) };
  if (flag('--max-retries') !== undefined) env.CLAUDE_CODE_MAX_RETRIES = flag('--max-retries');
  const bin = new URL('./node_modules/.bin/claude', import.meta.url).pathname;
  const child = spawn(bin, ['-p', 'hi', '--output-format', 'json', ...claudeFlags], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { out += c; });
  child.on('exit', (code) => {
    const end = Date.now();
    for (const [i, e] of log.entries()) {
      console.log(`#${i + 1} t=${((e.t - t0) / 1000).toFixed(2)}s wait=${(e.wait / 1000).toFixed(2)}s ${e.url} model=${e.model}${e.stream ? ' stream' : ''}`);
    }
    let result = out.trim();
    try {
      const j = JSON.parse(out);
      result = `api_error_status=${j.api_error_status} terminal_reason=${j.terminal_reason} result=${JSON.stringify(j.result)}`;
    } catch { /* not JSON: print as it is */ }
    const span = first ? ((end - first) / 1000).toFixed(1) : '-';
    console.log(`requests ${log.length}, exit ${code}, ${span} s from the first request to the exit; ${result}`);
    server.close();
    server.closeAllConnections();
  });
});
