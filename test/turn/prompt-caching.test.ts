/**
 * Provider prompt caching on the real path: Keel marks the stable prefix with `cache_control`, the
 * fake API (strict about the 4-marker limit, caching only byte-identical prefixes) reports reads and
 * writes, and the session's counters, status and `keel status` show the cache hit rate.
 */
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { keel } from '../support/keel-cli';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import { registerContextEngine } from '../../src/engine/registry';
import type { AssistantMessage, MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const suite = integrationSuite();

/** A real tool list is long: this one alone passes the 1024-token minimum a prefix needs to be cached. */
function catalogTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'lookup_part',
    description: `Looks a part up in the catalog. ${'Parts have a number, a name, a supplier, a price and a stock level per warehouse. '.repeat(60)}`,
    input: z.object({ partNumber: z.string() }),
    run: async ({ partNumber }) => `${partNumber}: 12 in stock`,
  });
}

/** Where a request carries `cache_control`: `tool:<i>`, `system:<i>`, `message:<i>.<block>`. */
function markers(request: FakeRequest): string[] {
  const out: string[] = [];
  const body = request.body;
  (body.tools ?? []).forEach((t, i) => t.cache_control && out.push(`tool:${i}`));
  if (Array.isArray(body.system))
    body.system.forEach((b: any, i: number) => b.cache_control && out.push(`system:${i}`));
  (body.messages ?? []).forEach(
    (m, i) =>
      Array.isArray(m.content) &&
      m.content.forEach((b: any, j: number) => b.cache_control && out.push(`message:${i}.${j}`)),
  );
  return out;
}

/** A pass-through engine that adds to the system prompt (it must end the cached system block). */
let unregisterEngine: () => void;
beforeAll(() => {
  unregisterEngine = registerContextEngine('house-rules', () => ({
    id: 'house-rules',
    ingest: async () => {},
    compact: async () => ({ delegated: true }),
    assemble: async ({ messages }) => ({
      messages,
      estimatedTokens: 100 * messages.length,
      systemPromptAddition: 'Answer from the catalog only.',
    }),
  }));
});
afterAll(() => unregisterEngine());

describe.each(testDatabases())('prompt caching on $name', (database) => {
  const db = suite.storePerTest(database);
  const config = { contextEngine: 'house-rules' };

  it('marks tools, system and the conversation prefix, and the next call reads what the last one wrote', () =>
    suite.withWorker(db.store, { tools: catalogTools(), config }, async ({ client, store, fake }) => {
      fake.clearPromptCache();
      const agent = `c${Math.random().toString(36).slice(2, 9)}`;
      const key = `agent:${agent}:main`;
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.text('Hello! Ask me about parts.'),
        fakeReply.toolUse([{ id: 'toolu_p1', name: 'lookup_part', input: { partNumber: 'P-100' } }]),
        fakeReply.text('P-100: 12 in stock.'),
      );
      const turn1 = await client.sendMessage(key, 'hello');
      const turn2 = await client.sendMessage(key, 'how many P-100 do we have?');
      const [r1, r2, r3] = fake.requests.slice(first);

      // Call 1: [user]. Call 2: [user, assistant, user]. Call 3 (after the tool): [..., assistant tool_use, user tool_result].
      // The last tool (the built-ins come after the application's) carries the tools' marker.
      expect(r1!.body.tools!.map((t) => t.name)).toEqual([
        'lookup_part',
        'memory_search',
        'history_search',
        'history_expand',
        'sessions_spawn',
        'sessions_send',
        'sessions_history',
        'subagents',
      ]);
      expect(markers(r1!)).toEqual(['tool:7', 'system:0', 'message:0.0']);
      expect(markers(r2!)).toEqual(['tool:7', 'system:0', 'message:0.0', 'message:2.0']);
      expect(markers(r3!)).toEqual(['tool:7', 'system:0', 'message:2.0', 'message:4.0']);
      expect(r1!.body.tools![7]!.cache_control).toEqual({ type: 'ephemeral' });
      // The whole system prompt is one cached block; the engine's addition ends it.
      const system = r1!.body.system as Array<{ type: string; text: string; cache_control?: unknown }>;
      expect(system).toHaveLength(1);
      expect(system[0]).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
      expect(system[0]!.text.startsWith('You are a personal assistant running inside Keel.')).toBe(true);
      expect(system[0]!.text.endsWith('Answer from the catalog only.')).toBe(true);
      // Byte-identical across calls, or the prefix could never be read back.
      expect(r2!.body.system).toEqual(r1!.body.system);

      // The first call writes; each later call reads the prefix the call before it wrote.
      expect(turn1.usage.cacheReadTokens).toBe(0);
      expect(turn1.usage.cacheWriteTokens).toBeGreaterThan(1024);
      expect(turn2.usage.cacheReadTokens).toBeGreaterThan(2 * turn1.usage.cacheWriteTokens!);
      expect(turn2.usage.inputTokens).toBeLessThan(turn2.usage.cacheReadTokens! / 10);

      // Per call on the stored reply, per session on the counters.
      const session = (await getSession(store.db, agent, key))!;
      const replies = (await allEntries(store.db, agent, session.session_id))
        .map((r) => (r.payload as unknown as MessageEntry).message)
        .filter((m): m is AssistantMessage => m.role === 'assistant');
      expect(replies.map((m) => m.usage?.cacheRead ?? -1)).toEqual([0, expect.any(Number), expect.any(Number)]);
      expect(replies[1]!.usage!.cacheRead).toBeGreaterThan(0);
      const read = turn1.usage.cacheReadTokens! + turn2.usage.cacheReadTokens!;
      const written = turn1.usage.cacheWriteTokens! + turn2.usage.cacheWriteTokens!;
      expect(Number(session.cache_read_tokens)).toBe(read);
      expect(Number(session.cache_write_tokens)).toBe(written);

      const status = await client.getStatus(key);
      const uncached = turn1.usage.inputTokens + turn2.usage.inputTokens;
      expect(status.promptCache).toEqual({
        inputTokens: uncached,
        cacheReadTokens: read,
        cacheWriteTokens: written,
        hitRatePercent: Math.round((read / (uncached + read + written)) * 1000) / 10,
      });
      const cli = await keel(['status', key], { ...suite.env.processEnv, DATABASE_URL: undefined });
      expect(cli.stderr).toContain(
        `prompt cache ${status.promptCache!.hitRatePercent.toFixed(1)}% hit · ${read.toLocaleString('en-US')} read`,
      );
    }));

  it('sends no cache_control at all with promptCaching off', () =>
    suite.withWorker(
      db.store,
      { tools: catalogTools(), config: { ...config, promptCaching: false } },
      async ({ client, fake }) => {
        fake.clearPromptCache();
        const key = `agent:n${Math.random().toString(36).slice(2, 9)}:main`;
        const first = fake.requests.length;
        fake.enqueue(fakeReply.text('one'), fakeReply.text('two'));
        await client.sendMessage(key, 'hello');
        const turn2 = await client.sendMessage(key, 'again');
        const sent = fake.requests.slice(first);
        expect(sent).toHaveLength(2);
        expect(typeof sent[0]!.body.system).toBe('string');
        expect(sent[0]!.body.system as string).toMatch(/Answer from the catalog only\.$/);
        for (const request of sent) expect(request.rawBody).not.toContain('cache_control');
        expect(turn2.usage.cacheReadTokens).toBe(0);
        expect((await client.getStatus(key)).promptCache).toMatchObject({
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          hitRatePercent: 0,
        });
      },
    ));
});
