// The harness of LangChain.js's ChatOpenAI (npm @langchain/openai, pinned
// in package.json) for 'retrysim validate --exec "node
// clients/node/langchain-openai.mjs"': Chat Completions, LangChain's own
// retries.
import { ChatOpenAI } from '@langchain/openai';
import { run } from './harness.mjs';

// --max-retries N sets LangChain's retries (default 6), for shorter runs.
// The warm-up calls get none: serve's 529 carries a 1 ms retry-after,
// which LangChain does not read on a 529, so each would sleep its backoff.
const maxRetries = process.argv[2] === '--max-retries' ? Number(process.argv[3]) : undefined;

await run(
  '@langchain/openai',
  (defaultHeaders, warmup) => new ChatOpenAI({ model: 'gpt-test', apiKey: 'retrysim', maxTokens: 16, maxRetries: warmup ? 0 : maxRetries,
    configuration: { baseURL: process.env.OPENAI_BASE_URL, defaultHeaders } }),
  async (model, stream) => {
    if (!stream) return model.invoke('hi');
    for await (const _ of await model.stream('hi')) {
      // read to the end; an error chunk is thrown here
    }
  },
);
