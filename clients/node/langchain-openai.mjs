// The harness of LangChain.js's ChatOpenAI (npm @langchain/openai, pinned
// in package.json) for 'retrysim validate --exec "node
// clients/node/langchain-openai.mjs"': Chat Completions, LangChain's own
// retries.
import { ChatOpenAI } from '@langchain/openai';
import { run } from './harness.mjs';

await run(
  '@langchain/openai',
  (defaultHeaders) => new ChatOpenAI({ model: 'gpt-test', apiKey: 'retrysim', maxTokens: 16,
    configuration: { baseURL: process.env.OPENAI_BASE_URL, defaultHeaders } }),
  async (model, stream) => {
    if (!stream) return model.invoke('hi');
    for await (const _ of await model.stream('hi')) {
      // read to the end; an error chunk is thrown here
    }
  },
);
