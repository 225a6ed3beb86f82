// The harness of LangChain.js's ChatAnthropic (npm @langchain/anthropic,
// pinned in package.json) for 'retrysim validate --exec "node
// clients/node/langchain-anthropic.mjs"': LangChain's own retries
// (@langchain/core's AsyncCaller), the SDK's switched off by LangChain.
import { ChatAnthropic } from '@langchain/anthropic';
import { run } from './harness.mjs';

// --max-retries N sets LangChain's retries (default 6), for shorter runs.
// The warm-up calls get none: serve's 529 carries a 1 ms retry-after,
// which LangChain does not read on a 529, so each would sleep its backoff.
const maxRetries = process.argv[2] === '--max-retries' ? Number(process.argv[3]) : undefined;

await run(
  '@langchain/anthropic',
  (defaultHeaders, warmup) => new ChatAnthropic({ anthropicApiUrl: process.env.ANTHROPIC_BASE_URL, apiKey: 'retrysim',
    model: 'claude-test', maxTokens: 16, maxRetries: warmup ? 0 : maxRetries, clientOptions: { defaultHeaders } }),
  async (model, stream) => {
    if (!stream) return model.invoke('hi');
    for await (const _ of await model.stream('hi')) {
      // read to the end; an error event is thrown here
    }
  },
);
