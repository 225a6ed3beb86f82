// The harness of LangChain.js's ChatAnthropic (npm @langchain/anthropic,
// pinned in package.json) for 'retrysim validate --exec "node
// clients/node/langchain-anthropic.mjs"': LangChain's own retries
// (@langchain/core's AsyncCaller), the SDK's switched off by LangChain.
import { ChatAnthropic } from '@langchain/anthropic';
import { run } from './harness.mjs';

await run(
  '@langchain/anthropic',
  (defaultHeaders) => new ChatAnthropic({ anthropicApiUrl: process.env.ANTHROPIC_BASE_URL, apiKey: 'retrysim',
    model: 'claude-test', maxTokens: 16, clientOptions: { defaultHeaders } }),
  async (model, stream) => {
    if (!stream) return model.invoke('hi');
    for await (const _ of await model.stream('hi')) {
      // read to the end; an error event is thrown here
    }
  },
);
