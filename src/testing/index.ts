/**
 * `<package>/testing`: test an agent without a model. `startFakeAnthropic` serves the Messages API
 * (and an OpenAI-compatible chat endpoint) from a script of replies, checks every request as strictly
 * as the provider does (tool pairing, tool schemas, cache markers, `max_tokens` and the 200,000-token
 * window), records what it received, and fails loudly when a request arrives after its script ran
 * out. Point the worker's `anthropicBaseUrl` at `fake.url`.
 *
 * @example
 *   const fake = await startFakeAnthropic();
 *   fake.enqueue(fakeReply.toolUse('lookup', { word: 'keel' }), fakeReply.text('A keel is …'));
 *   // … run a turn through a worker whose config has anthropicBaseUrl: fake.url …
 *   expect(fake.requests[1]!.body.messages!.at(-1)).toMatchObject({ role: 'user' });
 *   await fake.close();
 */
export {
  startFakeAnthropic,
  fakePromptTokens,
  fakeReply,
  type FakeAnthropic,
  type FakeAnthropicOptions,
  type FakeRequest,
  type FakeRequestBody,
  type FakeResponder,
  type FakeStep,
} from './fake-anthropic';
export {
  startFakeEmbeddings,
  type FakeEmbeddings,
  type FakeEmbeddingsOptions,
  type FakeEmbeddingsRequest,
} from './fake-embeddings';
export type { FakeOpenAiQuirks } from './fake-openai-quirks';
