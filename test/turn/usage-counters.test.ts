/**
 * A session's usage counters (and `keel status`'s prompt-cache line) count every token the provider
 * reports: the usage of Anthropic's server compaction, billed apart from the reply in its own
 * iteration, and the prompt tokens an OpenAI-compatible server read from its cache
 * (`prompt_tokens_details.cached_tokens`), apart from the uncached ones.
 */
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';
import { listCompactions } from '../../src/store/compactions-repo';
import { OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import type { KeelConfig } from '../../src/config/keel-config';
import type { Store } from '../../src/store/connect';
import type { KeelClient } from '../../src/client/keel-client';

const suite = integrationSuite();

type AnthropicUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  iterations?: AnthropicIteration[];
};
type AnthropicIteration = AnthropicUsage & { type: string };
type OpenAiUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
};

/** The counters a session should hold: the sum of what the provider reported, as Keel counts it. */
interface Counted {
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly outputTokens: number;
}

const sum = (items: Counted[]): Counted =>
  items.reduce(
    (a, b) => ({
      inputTokens: a.inputTokens + b.inputTokens,
      cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
      cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
      outputTokens: a.outputTokens + b.outputTokens,
    }),
    {
      inputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
    },
  );

/** An Anthropic reply's usage: the top level (the reply's own iterations) plus a compaction iteration, which it leaves out. */
function anthropicCounted(request: FakeRequest): Counted {
  const u = request.reportedUsage as AnthropicUsage;
  const parts = [u, ...(u.iterations ?? []).filter((i) => i.type === 'compaction')];
  return sum(
    parts.map((p) => ({
      inputTokens: p.input_tokens,
      cacheReadTokens: p.cache_read_input_tokens,
      cacheWriteTokens: p.cache_creation_input_tokens,
      outputTokens: p.output_tokens,
    })),
  );
}

/** An OpenAI completion's usage: `prompt_tokens` holds the cached ones. */
function openAiCounted(request: FakeRequest): Counted {
  const u = request.reportedUsage as OpenAiUsage;
  const cached = u.prompt_tokens_details.cached_tokens;
  return {
    inputTokens: u.prompt_tokens - cached,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: u.completion_tokens,
  };
}

/** The session row's counters and the status the workflow reports, side by side with what was expected. */
async function expectCounters(
  store: Store,
  client: KeelClient,
  agent: string,
  key: string,
  expected: Counted,
): Promise<void> {
  const row = (await getSession(store.db, agent, key))!;
  expect({
    inputTokens: Number(row.input_tokens),
    cacheReadTokens: Number(row.cache_read_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    outputTokens: Number(row.output_tokens),
  }).toEqual(expected);
  const { promptCache } = await client.getStatus(key);
  expect(promptCache).toMatchObject({
    inputTokens: expected.inputTokens,
    cacheReadTokens: expected.cacheReadTokens,
    cacheWriteTokens: expected.cacheWriteTokens,
  });
}

/** ~30k tokens as the fake counts them: two of them pass the 50k compaction trigger. */
const bulk = (part: number): string => `Log dump part ${part}. ${'filler text '.repeat(10_000)}`;

describe.each(testDatabases())('usage counters on $name', (database) => {
  const db = suite.storePerTest(database);

  it("count Anthropic's server compaction, reported in its own usage iteration, cache reads included", () => {
    const config: Partial<KeelConfig> = {
      contextEngine: 'anthropic-native',
      contextEngineOptions: { compactTriggerTokens: 50_000 },
    };
    return suite.withWorker(db.store, { config }, async ({ client, store, fake }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const before = fake.requests.length;
      fake.enqueue(fakeReply.text('noted'), fakeReply.text('got part 1'), fakeReply.text('read the dump'));
      await client.sendMessage(key, 'Remember ticket KEEL-4711.');
      await client.sendMessage(key, bulk(1));
      // Past the trigger: the fake compacts and pauses; Keel records it and calls again.
      expect((await client.sendMessage(key, bulk(2))).reply).toBe('read the dump');
      expect((await listCompactions(store.db, { agentId: agent, limit: 10 })).map((r) => r.trigger)).toEqual([
        'native',
      ]);

      const sent = fake.requests.slice(before);
      const compacting = sent.find((r) =>
        (r.reportedUsage as AnthropicUsage).iterations?.some((i) => i.type === 'compaction'),
      )!;
      const iteration = (compacting.reportedUsage as AnthropicUsage).iterations![0]!;
      // The compaction read the whole prompt, much of it from the cache the turn before wrote.
      expect(iteration.input_tokens).toBeGreaterThan(0);
      expect(iteration.cache_read_input_tokens).toBeGreaterThan(10_000);
      await expectCounters(store, client, agent, key, sum(sent.map(anthropicCounted)));
    });
  });

  it('count the prompt tokens an OpenAI-compatible server read from its cache apart from the uncached ones', () => {
    const model = new OpenAiCompatibleModelClient({ baseUrl: `${suite.fake.url}/v1`, model: 'local' });
    const config: Partial<KeelConfig> = { modelProvider: 'openai-compatible', openAiBaseUrl: `${suite.fake.url}/v1` };
    return suite.withWorker(db.store, { config, deps: { model } }, async ({ client, store, fake }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const before = fake.requests.length;
      fake.enqueue(fakeReply.text('read it'), fakeReply.text('still here'));
      await client.sendMessage(key, `Here is the log: ${'line of log text '.repeat(400)}`);
      await client.sendMessage(key, 'and now?');
      const sent = fake.requests.slice(before);
      expect(sent.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
      // The second prompt repeats the first: the server's cache served its prefix.
      expect(openAiCounted(sent[1]!).cacheReadTokens).toBeGreaterThanOrEqual(1024);
      await expectCounters(store, client, agent, key, sum(sent.map(openAiCounted)));
    });
  });
});
