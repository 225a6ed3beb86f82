// The harness of npm @anthropic-ai/sdk (pinned in package.json) for
// 'retrysim validate --exec "node clients/node/anthropic.mjs"'.
import Anthropic from '@anthropic-ai/sdk';
import { run } from './harness.mjs';

const params = { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

await run(
  '@anthropic-ai/sdk',
  (defaultHeaders) => new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL, apiKey: 'retrysim', defaultHeaders }),
  async (client, stream) => {
    if (!stream) return client.messages.create(params);
    const s = await client.messages.create({ ...params, stream: true });
    for await (const _ of s) {
      // read to the end; an error event is thrown here
    }
  },
);
