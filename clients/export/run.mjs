// Runs the TypeScript that 'retrysim show --policy NAME --for
// anthropic-typescript|openai-node' printed, compiled by tsc into build/,
// under 'retrysim validate --exec' (the callers of ../node/harness.mjs):
//   node clients/export/run.mjs anthropic|openai build/MODULE.js
// Each caller's client comes from the module's newClient and its call goes
// through the module's withRetries, when it has one (the SDK's own retries
// otherwise).
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { run } from '../node/harness.mjs';

const [sdk, file] = process.argv.slice(2);
if (!['anthropic', 'openai'].includes(sdk) || !file) {
  throw new Error('usage: node clients/export/run.mjs anthropic|openai build/MODULE.js');
}
const mod = await import(pathToFileURL(path.resolve(path.dirname(new URL(import.meta.url).pathname), file)).href);
const retry = mod.withRetries ?? ((call) => call());

const anthropicCall = async (client, stream) => {
  const params = { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  if (!stream) return client.messages.create(params);
  const s = await client.messages.create({ ...params, stream: true });
  for await (const _ of s) {
    // read to the end; an error event is thrown here
  }
};
const openaiCall = async (client, stream) => {
  const params = { model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  if (!stream) return client.chat.completions.create(params);
  const s = await client.chat.completions.create({ ...params, stream: true });
  for await (const _ of s) {
    // read to the end
  }
};
const call = sdk === 'anthropic' ? anthropicCall : openaiCall;
const baseURL = sdk === 'anthropic' ? process.env.ANTHROPIC_BASE_URL : process.env.OPENAI_BASE_URL;

// The warm-up calls (../node/harness.mjs) go once, around withRetries:
// retried, they would take the exported throttle's slots.
const warmups = new WeakSet();
await run(
  `retrysim show --for ${sdk === 'anthropic' ? 'anthropic-typescript' : 'openai-node'} (${file})`,
  (defaultHeaders) => {
    const client = mod.newClient({ baseURL, apiKey: 'retrysim', defaultHeaders });
    if (Object.values(defaultHeaders).includes('warmup')) warmups.add(client);
    return client;
  },
  (client, stream) => (warmups.has(client) ? call(client, stream) : retry(() => call(client, stream))),
);
