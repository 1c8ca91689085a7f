/**
 * The `anthropic-native` context engine through sendMessage turns on a real Temporal dev server:
 * the request carries the context-management edits and betas; when the (fake) API compacts, Keel
 * records it like any compaction (row, entry, `keel compactions`), later requests send the block
 * instead of the summarized messages, and history_expand still reaches them. With an
 * OpenAI-compatible provider the same config compacts the Keel way.
 */
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { waitUntil } from '../support/wait-until';
import { allEntries } from '../support/store-readers';
import { compactionsList, compactionsShow } from '../../src/cli/compactions';
import { listCompactions } from '../../src/store/compactions-repo';
import { getSession } from '../../src/store/sessions-repo';
import { OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import type { CompactionEntry, MessageEntry } from '../../src/context/types';
import type { KeelConfig } from '../../src/config/keel-config';
import { CompactionHooks } from '../../src/compaction/hooks';

const suite = integrationSuite();

function freshAgent(): string {
  return `n${Math.random().toString(36).slice(2, 10)}`;
}

const native: Partial<KeelConfig> = {
  contextEngine: 'anthropic-native',
  contextEngineOptions: { compactTriggerTokens: 50_000, clearToolUses: { keepToolUses: 2 } },
};
/** ~30k tokens as the fake counts them (a message may hold 200k characters): two of them pass the 50k trigger. */
const bulk = (part: number): string => `Log dump part ${part}. ${'filler text '.repeat(10_000)}`;
const textOf = (request: FakeRequest): string => JSON.stringify(request.body.messages);

describe.each(testDatabases())('anthropic-native engine on $name', (database) => {
  const db = suite.storePerTest(database);

  it('sends the edits, records the server compaction as a Keel compaction, and sends its block instead of what it summarized', () => {
    const hooked: string[] = [];
    const compactionHooks = new CompactionHooks()
      .on('before_compaction', (e) => void hooked.push(`before ${e.trigger}`))
      .on('after_compaction', (e) => void hooked.push(`after ${e.trigger} ${e.status}`));
    return suite.withWorker(
      db.store,
      { config: native, deps: { compactionHooks } },
      async ({ client, store, fake }) => {
        const agent = freshAgent();
        const key = `agent:${agent}:main`;
        const before = fake.requests.length;

        // 1. Under the trigger: an ordinary reply, but the request asks for compaction and tool clearing.
        fake.enqueue(fakeReply.text('noted'));
        await client.sendMessage(key, 'Remember ticket KEEL-4711 for the release.');
        const first = fake.requests[before]!;
        expect(String(first.headers['anthropic-beta']).split(',')).toEqual([
          'context-management-2025-06-27',
          'compact-2026-01-12',
        ]);
        expect(first.body.context_management).toEqual({
          edits: [
            { type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 2 } },
            {
              type: 'compact_20260112',
              trigger: { type: 'input_tokens', value: 50_000 },
              pause_after_compaction: true,
            },
          ],
        });

        // 2. Past the trigger: the fake compacts and pauses (no script step); Keel records it and calls again.
        fake.enqueue(fakeReply.text('got part 1'), fakeReply.text('read the dump'));
        await client.sendMessage(key, bulk(1));
        const turn = await client.sendMessage(key, bulk(2));
        expect(turn.reply).toBe('read the dump');
        const [compacting, continued] = fake.requests.slice(before + 2);
        expect(textOf(compacting!)).toContain('filler text');
        const session = (await getSession(store.db, agent, key))!;
        const [row] = await listCompactions(store.db, { agentId: agent, limit: 10 });
        expect(row).toMatchObject({
          trigger: 'native',
          status: 'succeeded',
          degraded: false,
          session_id: session.session_id,
        });
        expect(session.compaction_count).toBe(1);
        expect(hooked).toEqual(['before native', 'after native succeeded']);
        const entries = await allEntries(store.db, agent, session.session_id);
        const compactionEntry = entries.find((e) => e.type === 'compaction')!.payload as unknown as CompactionEntry;
        expect(compactionEntry).toMatchObject({ id: row!.id, firstKeptEntryId: row!.id });
        expect(compactionEntry.summary).toContain('Remember ticket KEEL-4711');
        // The continuation sends the block alone, verbatim, and names the compaction for recall in the system prompt.
        expect(continued!.body.messages).toEqual([
          {
            role: 'assistant',
            content: [expect.objectContaining({ type: 'compaction', content: compactionEntry.summary })],
          },
        ]);
        expect(JSON.stringify(continued!.body.system)).toContain(`Compaction ${row!.id} summarized entries`);

        // The operator surface lists and shows it like any compaction.
        let listed = '';
        const { compactions } = await compactionsList({
          db: store.db,
          agentId: agent,
          write: (t) => void (listed += t),
        });
        expect(compactions.map((c) => [c.id, c.trigger, c.status])).toEqual([[row!.id, 'native', 'succeeded']]);
        expect(listed).toContain(`${row!.id}`);
        const shown = await compactionsShow({ db: store.db, agentId: agent, id: row!.id, json: true });
        expect(shown.detail.summary).toContain('KEEL-4711');

        // 3. The next turn starts after the compaction: the block and the paused reply, not the dump; recall still reaches the raw entries.
        fake.enqueue(
          fakeReply.toolUse([{ id: 'x1', name: 'history_expand', input: { compactionId: row!.id } }]),
          fakeReply.text('KEEL-4711'),
        );
        const recalled = await client.sendMessage(key, 'Which ticket was it?');
        expect(recalled.reply).toBe('KEEL-4711');
        const [next, afterTool] = fake.requests.slice(before + 4);
        expect(next!.body.messages![0]).toEqual({
          role: 'assistant',
          content: [expect.objectContaining({ type: 'compaction' }), { type: 'text', text: 'read the dump' }],
        });
        expect(textOf(next!)).not.toContain('filler text '.repeat(20));
        expect(textOf(next!).length).toBeLessThan(5_000);
        expect(textOf(afterTool!)).toContain('Remember ticket KEEL-4711');
        expect(
          entries.some(
            (e) =>
              e.type === 'message' &&
              JSON.stringify((e.payload as unknown as MessageEntry).message).includes('filler text'),
          ),
        ).toBe(true);
      },
    );
  });

  it('with an OpenAI-compatible provider the same config sends no edits and compacts the Keel way', () => {
    const config: Partial<KeelConfig> = {
      ...native,
      modelProvider: 'openai-compatible',
      openAiBaseUrl: `${suite.fake.url}/v1`,
      contextWindowTokens: 30_000,
    };
    const model = new OpenAiCompatibleModelClient({ baseUrl: `${suite.fake.url}/v1`, model: 'local' });
    return suite.withWorker(db.store, { config, deps: { model } }, async ({ client, store, fake }) => {
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      const before = fake.requests.length;
      fake.enqueue(fakeReply.text('ok'));
      // The flush and the summarizer after the turn ask the same endpoint.
      fake.respondWith(() => fakeReply.text('Summary: the user pasted a long log dump; ticket KEEL-4711 is open.'));
      // ~12k tokens: past Keel's threshold (30k window less the 20k reserve floor).
      await client.sendMessage(key, `Ticket KEEL-4711. ${'log line '.repeat(5_500)}`);
      const [row] = await waitUntil('Keel compacts after the turn', async () => {
        const rows = await listCompactions(store.db, { agentId: agent, limit: 10 });
        return rows.length > 0 && rows.every((r) => r.status !== 'running') ? rows : undefined;
      });
      expect(row).toMatchObject({ trigger: 'threshold', status: 'succeeded' });
      const sent = fake.requests.slice(before);
      expect(sent.length).toBeGreaterThan(0);
      expect(
        sent.every(
          (r) =>
            r.path === '/v1/chat/completions' &&
            r.body.context_management === undefined &&
            r.headers['anthropic-beta'] === undefined,
        ),
      ).toBe(true);
    });
  });
});
