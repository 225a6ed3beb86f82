// The harness of npm openai (pinned in package.json) for
// 'retrysim validate --exec "node clients/node/openai.mjs"': Chat
// Completions, streamed when RETRYSIM_STREAM=1.
import OpenAI from 'openai';
import { run } from './harness.mjs';

const params = { model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

await run(
  'openai',
  (defaultHeaders) => new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'retrysim', defaultHeaders }),
  async (client, stream) => {
    if (!stream) return client.chat.completions.create(params);
    const s = await client.chat.completions.create({ ...params, stream: true });
    for await (const _ of s) {
      // read to the end; an error chunk is thrown here
    }
  },
);
