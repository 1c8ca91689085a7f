/**
 * A session never bricks on provider limits: the fake model refuses every request over its window
 * with the provider's own wording (chat, flush, summarizer and merge alike), and Keel learns the
 * limit, compacts within it and keeps answering.
 */
import { testDatabases } from '../support/databases';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';
import type { KeelClient } from '../../src/client/keel-client';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isSummarizerRequest,
  lastUserText,
  routedResponder,
  seedConversation,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import { estimateScaleFor, getLearnedWindow } from '../../src/store/model-limits-repo';
import { DEFAULTS } from '../../src/config/defaults';
import { getSession } from '../../src/store/sessions-repo';
import { listSessions } from '../../src/operations/sessions/list-sessions';
import { renderSessions } from '../../src/cli/sessions-list';
import { sessionWindowNote } from '../../src/operations/sessions/window-note';
import { loadKeelSettings } from '../../src/config/agent-config';
import { sessionCompactionBillingLine } from '../../src/operations/compactions/compaction-billing';
import { promptCacheLine } from '../../src/cli/prompt-cache-line';

const suite = integrationSuite();

/** ~`words` words of varied prose: large user messages, as a pasted document would be. */
function largeMessage(turn: number, words = 1_200): string {
  return (
    `Turn ${turn} notes: ` +
    Array.from({ length: words }, (_, i) => `item${(i * 7 + turn) % 97} value${i % 13}`).join(' ')
  );
}

/**
 * ~`words` long common words: Keel's tokenizer counts each as one token, the provider (the fake, at ~4
 * characters a token) as three or four, as a real provider's tokenizer can differ from Keel's on dense content.
 */
function denseMessage(turn: number, words = 1_000): string {
  const vocabulary = [
    'information',
    'organization',
    'administration',
    'communication',
    'responsibility',
    'international',
    'development',
  ];
  return (
    `Turn ${turn} words: ` +
    Array.from({ length: words }, (_, i) => vocabulary[(i * 5 + turn) % vocabulary.length]).join(' ')
  );
}

/**
 * Runs `body` with a worker whose compaction summarizer is a separate OpenAI-compatible model
 * ('local-summarizer') served by its own fake with a `tokenLimit` window, the chat model's at 200k.
 */
async function withLocalSummarizer(
  db: { store: Parameters<typeof suite.withWorker>[0] },
  tokenLimit: number,
  body: (summarizerFake: FakeAnthropic, client: KeelClient) => Promise<void>,
): Promise<void> {
  const summarizerFake = await startFakeAnthropic({ tokenLimit });
  summarizerFake.respondWith(goodSummarizer);
  const summarizer = {
    config: {
      compactionModel: 'local-summarizer',
      compactionModelUrl: summarizerFake.url,
      contextWindowTokens: 60_000,
    },
    deps: {
      compactionModel: new OpenAiCompatibleModelClient({ baseUrl: summarizerFake.url, model: 'local-summarizer' }),
    },
  };
  try {
    await suite.withWorker(db.store, summarizer, async ({ client }) => {
      suite.fake.setTokenLimit(200_000);
      await body(summarizerFake, client);
    });
  } finally {
    await summarizerFake.close();
  }
}

describe.each(testDatabases())('provider limits on $name', (database) => {
  const db = suite.storePerTest(database);
  beforeEach(() => {
    suite.fake.setTokenLimit(30_000);
  });
  afterEach(() => {
    suite.fake.setTokenLimit(200_000);
  });

  it('keeps answering when the provider window is 30k under a configured 200k: every turn answered, compactions recorded', async () => {
    await suite.withWorker(db.store, {}, async ({ client }) => {
      suite.fake.respondWith(
        routedResponder((request) => fakeReply.text(`ok: ${lastUserText(request).split(':')[0]}`)),
      );
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const overflowsBefore = suite.fake.overflowed.length;
      for (let turn = 1; turn <= 20; turn++) {
        const result = await client.sendMessage(key, largeMessage(turn));
        expect(result.reply).toBe(`ok: Turn ${turn} notes`);
      }
      // The limit was learned (in Keel's estimate, under the provider's 30k) and is what status reports.
      const learned = await getLearnedWindow(db.store.db, DEFAULTS.model);
      expect(learned).toBeLessThan(30_000);
      const status = await client.getStatus(key);
      expect(status.contextWindow).toBe(learned);
      expect(status.configuredContextWindow).toBe(200_000);
      // Compactions ran and succeeded with a model summary; overflows were few (learning, not retrying blindly).
      const compactions = await db.store.db
        .selectFrom('compactions')
        .selectAll()
        .where('agent_id', '=', agent)
        .execute();
      expect(compactions.length).toBeGreaterThanOrEqual(2);
      expect(compactions.every((c) => c.status === 'succeeded')).toBe(true);
      expect(compactions.map((c) => c.trigger)).toContain('overflow');
      expect(suite.fake.overflowed.length - overflowsBefore).toBeLessThanOrEqual(4);
    });
  }, 900_000);

  it("learns the estimate's shortfall for the session whose content caused it, not for every session of the model", async () => {
    await suite.withWorker(db.store, {}, async ({ client }) => {
      suite.fake.respondWith(
        routedResponder((request) => fakeReply.text(`ok: ${lastUserText(request).split(':')[0]}`)),
      );
      const agent = freshDurableAgent();
      const dense = `agent:${agent}:dense`;
      const prose = `agent:${agent}:prose`;
      const overflowsBefore = suite.fake.overflowed.length;
      for (let turn = 1; turn <= 10; turn++) {
        expect((await client.sendMessage(dense, denseMessage(turn))).reply).toBe(`ok: Turn ${turn} words`);
      }
      // The provider refused the dense session's prompt, which Keel had estimated at about a third of its count.
      expect(suite.fake.overflowed.length).toBeGreaterThan(overflowsBefore);
      // The model's window is the provider's stated 30,000 less 5%; the shortfall is the dense session's alone.
      expect(await getLearnedWindow(db.store.db, DEFAULTS.model)).toBe(28_500);
      const scale = estimateScaleFor(await getSession(db.store.db, agent, dense), DEFAULTS.model)!;
      expect(scale).toBeGreaterThan(0.2);
      expect(scale).toBeLessThan(0.6);
      expect((await client.getStatus(dense)).contextWindow).toBe(Math.floor(28_500 * scale));

      // A prose session of the same model budgets with the model's window, and sends its whole conversation.
      const requestsBefore = suite.fake.requests.length;
      for (let turn = 1; turn <= 2; turn++)
        expect((await client.sendMessage(prose, largeMessage(turn, 300))).reply).toBe(`ok: Turn ${turn} notes`);
      expect((await client.getStatus(prose)).contextWindow).toBe(28_500);
      expect((await getSession(db.store.db, agent, prose))!.estimate_scales).toBeNull();
      const sent = suite.fake.requests.slice(requestsBefore).filter((r) => !isSummarizerRequest(r));
      expect(sent.at(-1)!.body.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(
        await db.store.db
          .selectFrom('compactions')
          .select('id')
          .where('agent_id', '=', agent)
          .where('session_key', '=', prose)
          .execute(),
      ).toEqual([]);
      // `keel sessions` shows each session the window its turns use, as status does.
      const listed = await listSessions(db.store.db, loadKeelSettings({ env: {}, overrides: {} }), { agentId: agent });
      expect(Object.fromEntries(listed.map((l) => [l.sessionKey, l.contextWindow]))).toEqual({
        [dense]: Math.floor(28_500 * scale),
        [prose]: 28_500,
      });
      expect(Object.fromEntries(listed.map((l) => [l.sessionKey, l.estimateScale]))).toEqual({
        [dense]: scale,
        [prose]: undefined,
      });
      let shown = '';
      renderSessions(listed, (text) => (shown += text));
      expect(shown).toContain(
        `window ${Math.round(scale * 100)}% of the model's: the provider counts this session's content denser`,
      );
      // `keel status` says why each window is what it is.
      const limited = `window: ${DEFAULTS.model} is limited to 28,500 tokens (the provider's stated maximum 30,000 less 5%)`;
      expect(await sessionWindowNote(db.store.db, agent, dense, DEFAULTS.model)).toBe(
        `${limited}; this session gets ${Math.round(scale * 100)}% of it: the provider counts its content denser than Keel's estimate (a large reply measured lighter, or /new, restores it)`,
      );
      expect(await sessionWindowNote(db.store.db, agent, prose, DEFAULTS.model)).toBe(limited);

      // The dense session compacts its dense words away and goes on in prose: a large prompt's usage
      // shows the estimate no longer short by as much, and the session's window grows back (a reset
      // would clear it too, but a session that compacted should not have to wait for one).
      await client.compact(dense, { keepRecentTokens: 500 });
      const overflowsAfterDense = suite.fake.overflowed.length;
      let turn = 1;
      while (estimateScaleFor(await getSession(db.store.db, agent, dense), DEFAULTS.model) === scale && turn <= 8) {
        expect((await client.sendMessage(dense, largeMessage(turn, 400))).reply).toBe(`ok: Turn ${turn} notes`);
        turn += 1;
      }
      const raised = estimateScaleFor(await getSession(db.store.db, agent, dense), DEFAULTS.model);
      expect(raised === undefined || raised > scale + DEFAULTS.scaleRiseMinStep).toBe(true);
      expect((await client.getStatus(dense)).contextWindow).toBeGreaterThan(Math.floor(28_500 * scale));
      expect(suite.fake.overflowed.length).toBe(overflowsAfterDense);
      expect(
        (await listSessions(db.store.db, loadKeelSettings({ env: {}, overrides: {} }), { agentId: agent })).find(
          (l) => l.sessionKey === dense,
        )?.estimateScale,
      ).toBe(raised);
    });
  }, 900_000);

  it('splits and retries a summarizer that overflows on its first chunk, before any extractive fallback', async () => {
    // The summarizer is a separate OpenAI-compatible model whose real window (12k) is far below the chat model's.
    await withLocalSummarizer(db, 12_000, async (summarizerFake, client) => {
      suite.fake.respondWith(routedResponder(() => fakeReply.text('fine')));
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      await seedConversation(db.store.db, agent, key, 400, 60);
      const result = await client.compact(key, { keepRecentTokens: 2_000 });
      expect(result.status).toBe('succeeded');
      expect(result.degraded).toBe(false);
      // The first chunk overflowed the summarizer, which learned its window and split the work.
      expect(summarizerFake.overflowed.length).toBeGreaterThanOrEqual(1);
      expect(await getLearnedWindow(db.store.db, 'local-summarizer')).toBeLessThan(12_000);
      const answered = summarizerFake.requests.filter((r) => !summarizerFake.overflowed.some((o) => o.request === r));
      expect(answered.length).toBeGreaterThan(2);
    });
  }, 600_000);

  it("keeps a summarizer's shortfall to the summarizer: the session's chat window is not narrowed by another model's tokenizer", async () => {
    await withLocalSummarizer(db, 40_000, async (summarizerFake, client) => {
      suite.fake.respondWith(
        routedResponder((request) => fakeReply.text(`ok: ${lastUserText(request).split(':')[0]}`)),
      );
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      for (let turn = 1; turn <= 16; turn++)
        expect((await client.sendMessage(key, denseMessage(turn))).reply).toBe(`ok: Turn ${turn} words`);
      // The dense words are ~1 token each to Keel and 3-4 to the summarizer: its first chunk overflows.
      expect(await client.compact(key, { keepRecentTokens: 500 })).toMatchObject({
        status: 'succeeded',
        degraded: false,
      });
      expect(summarizerFake.overflowed.length).toBeGreaterThanOrEqual(1);
      const row = await getSession(db.store.db, agent, key);
      expect(estimateScaleFor(row, 'local-summarizer')).toBeLessThan(0.6);
      expect(estimateScaleFor(row, DEFAULTS.model)).toBeUndefined();
      // The chat model's window is the configured one still, in the next turn and in `keel sessions`.
      expect((await client.sendMessage(key, 'Turn 17: and now?')).reply).toBe('ok: Turn 17');
      expect((await client.getStatus(key)).contextWindow).toBe(60_000);
      const listed = await listSessions(
        db.store.db,
        loadKeelSettings({ env: {}, overrides: { contextWindowTokens: 60_000 } }),
        { agentId: agent },
      );
      expect(listed.map((l) => [l.contextWindow, l.estimateScale])).toEqual([[60_000, undefined]]);
      expect(await sessionWindowNote(db.store.db, agent, key, DEFAULTS.model)).toBeNull();
      expect(await sessionWindowNote(db.store.db, agent, key, 'local-summarizer')).toMatch(
        /^window: local-summarizer is limited to [\d,]+ tokens \(the provider's stated maximum 40,000 less 5%\); this session gets \d+% of it/,
      );
    });
  }, 600_000);

  it('compacts an imported ~1M-token session manually: with no model (extractive) and with a model', async () => {
    suite.fake.setTokenLimit(200_000);
    const agent = freshDurableAgent();
    // ~1,800 long lines, as a long OpenClaw transcript imported with `keel import`.
    const noModelKey = `agent:${agent}:imported-a`;
    const modelKey = `agent:${agent}:imported-b`;
    await seedConversation(db.store.db, agent, noModelKey, 1_800, 450);
    await seedConversation(db.store.db, agent, modelKey, 1_800, 450);

    // No model configured: the flush is skipped, the summary is extractive, the suite.fake is never called.
    const requestsBefore = suite.fake.requests.length;
    const noModel = { config: { anthropicApiKey: undefined, anthropicBaseUrl: undefined } };
    await suite.withWorker(db.store, noModel, async ({ client }) => {
      const result = await client.compact(noModelKey);
      expect(result).toMatchObject({ status: 'succeeded', degraded: true });
      expect(result.tokensBefore).toBeGreaterThan(900_000);
      expect(result.tokensAfter).toBeLessThan(25_000);
      expect(suite.fake.requests.length).toBe(requestsBefore);
      const row = await db.store.db
        .selectFrom('compactions')
        .selectAll()
        .where('id', '=', result.compactionId)
        .executeTakeFirstOrThrow();
      expect(row.memory_flush).toBe('skipped: no-model');
    });

    // With a model: every request (flush on the recent tail, chunks, merge) fits the provider's window.
    const overflowsBefore = suite.fake.overflowed.length;
    suite.fake.respondWith(routedResponder(() => fakeReply.text('unused')));
    await suite.withWorker(db.store, {}, async ({ client }) => {
      const result = await client.compact(modelKey);
      expect(result).toMatchObject({ status: 'succeeded', degraded: false });
      expect(result.tokensAfter).toBeLessThan(25_000);
      expect(suite.fake.overflowed.length).toBe(overflowsBefore);
      const row = await db.store.db
        .selectFrom('compactions')
        .selectAll()
        .where('id', '=', result.compactionId)
        .executeTakeFirstOrThrow();
      expect(row.memory_flush).toMatch(/^ran on the recent tail/);
      expect(suite.fake.requests.slice(requestsBefore).some(isSummarizerRequest)).toBe(true);
    });
  }, 900_000);
});

/**
 * A local OpenAI-compatible server with llama-cpp-python's ways, as a new user configures it: an
 * agent whose `model` is that endpoint (the worker builds its client from config), a window guessed
 * at 16k where the server holds 4,096. The server hides a streamed overflow in an empty 200, reports
 * no usage in streams, cuts a reply short when a second request arrives, treats tools without
 * tool_choice as "none", and refuses to stream an automatic tool choice.
 */
describe.each(testDatabases())('a local OpenAI-compatible server on $name', (database) => {
  const db = suite.storePerTest(database);
  // A model name of its own per test: what a client learns about a server lasts for the process.
  const localModel = (url: string, model = `gemma-${freshDurableAgent()}`) => ({
    modelProvider: 'openai-compatible' as const,
    openAiBaseUrl: `${url}/v1`,
    model,
    contextWindowTokens: 16_000,
  });
  beforeEach(() => {
    suite.fake.setTokenLimit(4_096);
    suite.fake.setOpenAiQuirks({
      emptyStreamOnOverflow: true,
      noStreamUsage: true,
      interruptOnNewRequest: true,
      toolChoiceDefaultsToNone: true,
      noStreamingToolChoice: true,
    });
  });
  afterEach(() => {
    suite.fake.setTokenLimit(200_000);
    suite.fake.setOpenAiQuirks({});
  });

  it('compacts on an overflow hidden in an empty stream, counts usage as estimated, and makes tool calls', async () => {
    const config = localModel(suite.fake.url);
    await suite.withWorker(db.store, { config }, async ({ client }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const before = suite.fake.requests.length;
      suite.fake.respondWith(
        routedResponder((request) => {
          const text = lastUserText(request);
          // The tool turn: the model searches, then answers from the result.
          if (text.startsWith('Search') && request.body.messages!.at(-1)!.role !== 'tool')
            return fakeReply.toolUse([
              { id: `call_${request.index}`, name: 'history_search', input: { query: 'item5' } },
            ]);
          return fakeReply.text('ok, noted', { eventDelayMs: 1 });
        }),
      );
      // A first request with 16k's max_tokens overflows at once; later ones fit the learned window.
      for (let turn = 1; turn <= 8; turn++) {
        expect((await client.sendMessage(key, largeMessage(turn, 300))).reply).toBe('ok, noted');
      }
      expect((await client.sendMessage(key, 'Search: what was item5?')).reply).toBe('ok, noted');

      const sent = suite.fake.requests.slice(before);
      // The overflow came as an empty stream; one unstreamed request named it; a compaction and a learned window followed.
      expect(suite.fake.overflowed.some((o) => o.request.index >= before && o.request.stream)).toBe(true);
      const learned = await getLearnedWindow(db.store.db, config.model);
      expect(learned).toBeLessThanOrEqual(4_096);
      const compactions = await db.store.db
        .selectFrom('compactions')
        .selectAll()
        .where('session_key', '=', key)
        .execute();
      expect(compactions.map((c) => c.trigger)).toContain('overflow');
      // None failed. The overflow's own compaction may find nothing to free (the overflow was the reply's
      // max_tokens, which the learned window sizes down): it is skipped, and the call made again fits.
      expect(compactions.filter((c) => c.status !== 'succeeded' && c.status !== 'skipped')).toEqual([]);
      // The same request was never resent as a stream after the empty one: no minutes of retries.
      const emptied = sent.filter((r) => suite.fake.overflowed.some((o) => o.request === r && r.stream));
      for (const r of emptied) expect(sent[sent.indexOf(r) + 1]!.stream).toBe(false);
      // One slot: Keel's own calls (chunk summaries included) were queued, never interrupting each other.
      expect(suite.fake.interrupted).toEqual([]);
      // Tools were offered with tool_choice "auto"; the refused stream was asked again unstreamed, and the call ran.
      const toolTurn = sent.filter((r) => r.body.tools !== undefined);
      expect(toolTurn.every((r) => r.body.tool_choice === 'auto')).toBe(true);
      const searchCall = (m: { role: string; tool_calls?: Array<{ id: string; function: { name: string } }> }) =>
        m.tool_calls?.find((c) => c.function.name === 'history_search');
      const answered = sent.find((r) => r.body.messages!.some((m) => searchCall(m)));
      const callId = searchCall(answered!.body.messages!.find((m) => searchCall(m))!)!.id;
      const result = answered!.body.messages!.find(
        (m) => m.role === 'tool' && (m as { tool_call_id?: string }).tool_call_id === callId,
      );
      expect(result!.content).toContain('item5');
      // No usage came from the server: the counters are Keel's count, and say so.
      // Tool turns went unstreamed and so came with usage; the summaries streamed without: Keel's count, marked.
      const summarized = compactions.filter((c) => c.summarizer_calls > 0);
      expect(summarized.length).toBeGreaterThan(0);
      expect(summarized.every((c) => c.summarizer_usage_estimated && c.summarizer_input_tokens > 0)).toBe(true);
      expect(await sessionCompactionBillingLine(db.store.db, compactions[0]!.agent_id, key)).toContain(
        '(estimated: the model server reported no usage, Keel counted)',
      );
    });

    // A streamed turn without usage: the session's counters hold Keel's count and say so.
    suite.fake.setOpenAiQuirks({ noStreamUsage: true });
    suite.fake.setTokenLimit(200_000);
    const streaming = localModel(suite.fake.url);
    await suite.withWorker(db.store, { config: streaming }, async ({ client }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      suite.fake.respondWith(routedResponder(() => fakeReply.text('streamed, no usage')));
      expect((await client.sendMessage(key, 'hello there')).reply).toBe('streamed, no usage');
      const status = await client.getStatus(key);
      expect(status.promptCache).toMatchObject({ estimated: true });
      expect(status.promptCache!.inputTokens).toBeGreaterThan(10);
      expect(promptCacheLine(status.promptCache!)).toContain('(estimated: the model server reported no usage');
    });
  }, 900_000);
});
