// The harness of Vercel's AI SDK (npm ai with @ai-sdk/anthropic or
// @ai-sdk/openai, pinned in package.json) for 'retrysim validate --exec
// "node clients/node/ai-sdk.mjs anthropic|openai"': generateText, or
// streamText read to the end when RETRYSIM_STREAM=1; the AI SDK's own
// retries (it calls the API with fetch, no SDK underneath).
import { generateText, streamText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { run } from './harness.mjs';

const provider = process.argv[2];
const models = {
  // The provider's baseURL includes /v1.
  anthropic: (headers) => createAnthropic({ baseURL: `${process.env.ANTHROPIC_BASE_URL}/v1`, apiKey: 'retrysim', headers })('claude-test'),
  openai: (headers) => createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'retrysim', headers }).chat('gpt-test'),
};
if (!models[provider]) {
  console.error('usage: node clients/node/ai-sdk.mjs anthropic|openai');
  process.exit(2);
}

await run(`ai with @ai-sdk/${provider}`, models[provider], async (model, stream) => {
  // onError: the default handler logs every failure; the harness counts them.
  const params = { model, prompt: 'hi', maxOutputTokens: 16, onError: () => {} };
  if (!stream) return generateText(params);
  // streamText reports a failure as an error part rather than throwing.
  for await (const part of streamText(params).fullStream) {
    if (part.type === 'error') throw part.error;
  }
});
