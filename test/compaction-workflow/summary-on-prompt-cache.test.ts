/**
 * The summary on the conversation's own prompt cache, on the real path: a turn through `sendMessage`
 * crosses the threshold, and the compaction's summary request repeats that turn's request (tools,
 * system prompt, messages, cache markers) byte for byte up to its last marker, so the strict fake
 * bills the prefix as a cache read; the compaction's row records what it was billed. A manual
 * compaction after a later turn does the same.
 */
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummaryOnConversationRequest,
  lastUserText,
  seedConversation,
  waitIdle,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from './support';
import type { Store } from '../../src/store/connect';
import { compactionsShow } from '../../src/cli/compactions';
import { sessionCompactionBillingLine } from '../../src/operations/compactions/compaction-billing';

const suite = integrationSuite();

/** The request's prompt blocks in cache order (tools, system, each message's blocks), each as sent, markers included. */
function promptBlocks(request: FakeRequest): Array<{ json: string; marked: boolean }> {
  const out: Array<{ json: string; marked: boolean }> = [];
  const add = (where: string, block: unknown) =>
    out.push({
      json: `${where} ${JSON.stringify(block)}`,
      marked: (block as { cache_control?: unknown }).cache_control !== undefined,
    });
  const body = request.body;
  (body.tools ?? []).forEach((t, i) => add(`tool ${i}`, t));
  if (typeof body.system === 'string') add('system 0', { type: 'text', text: body.system });
  else ((body.system ?? []) as unknown[]).forEach((b, i) => add(`system ${i}`, b));
  (body.messages ?? []).forEach((m, i) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    blocks.forEach((b: unknown, j: number) => add(`message ${i} ${m.role} ${j}`, b));
  });
  return out;
}

/** The request's blocks up to and including its last cache marker. */
function upToLastMarker(request: FakeRequest): string[] {
  const blocks = promptBlocks(request);
  const last = blocks.map((b) => b.marked).lastIndexOf(true);
  return blocks.slice(0, last + 1).map((b) => b.json);
}

interface Billing {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** What the fake reported for these requests, summed. */
function reported(requests: readonly FakeRequest[]): Billing {
  const sum = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  for (const r of requests) {
    const u = r.reportedUsage as {
      input_tokens: number;
      output_tokens: number;
      cache_read_input_tokens?: number;
      cache_creation_input_tokens?: number;
    };
    sum.input += u.input_tokens;
    sum.output += u.output_tokens;
    sum.cacheRead += u.cache_read_input_tokens ?? 0;
    sum.cacheWrite += u.cache_creation_input_tokens ?? 0;
  }
  return sum;
}

async function compactionRows(store: Store, agent: string) {
  return store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).orderBy('started_at').execute();
}

/** The turn's request the summary followed: the last one before it that is neither a flush nor a summary. */
function turnBefore(requests: readonly FakeRequest[], summary: FakeRequest): FakeRequest {
  const before = requests.filter(
    (r) =>
      r.index < summary.index &&
      !isFlushRequest(r) &&
      !isSummaryOnConversationRequest(r) &&
      !JSON.stringify(r.body.system ?? '').includes('context checkpoint summaries'),
  );
  return before[before.length - 1]!;
}

/** A long answer: its tokens carry the context over the compaction threshold after the turn. */
const LONG_ANSWER = `Here is the full walkthrough. ${'The deployment uses host build-7.example.net and config /etc/keel/app.toml. '.repeat(320)}`;

describe.each(testDatabases())('summary on the prompt cache on $name', (database) => {
  const db = suite.storePerTest(database);

  it('a threshold and a manual compaction repeat the last turn’s request up to its last marker; the rows record what they were billed', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    const { sessionId } = await seedConversation(db.store.db, agent, key, 200);
    const { rows } = await sql<{
      t: number;
    }>`select coalesce(sum(token_estimate), 0)::int as t from transcript_entries where session_id = ${sessionId}`.execute(
      db.store.db,
    );
    const seeded = Number(rows[0]!.t);
    // The turn's prompt (the seeded history, system prompt and tools) stays under the threshold
    // (window − 20k reserve); its long answer carries the context over it.
    const window = seeded + 26_000;
    suite.fake.clearPromptCache();
    suite.fake.respondWith((request) => {
      if (
        isSummaryOnConversationRequest(request) ||
        JSON.stringify(request.body.system ?? '').includes('context checkpoint summaries')
      )
        return goodSummarizer(request);
      if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
      return fakeReply.text(lastUserText(request).startsWith('walk me') ? LONG_ANSWER : 'Noted.');
    });
    await suite.withWorker(db.store, { config: { contextWindowTokens: window } }, async ({ client, fake }) => {
      // A turn under the threshold first: the session's counters then describe its history, as in a live session.
      await client.sendMessage(key, 'hello again');
      const first = fake.requests.length;
      await client.sendMessage(key, 'walk me through the deployment');
      await waitIdle(() => client.getStatus(key));
      const [threshold] = await compactionRows(db.store, agent);
      expect(threshold).toMatchObject({ trigger: 'threshold', status: 'succeeded', degraded: false });

      const sent = fake.requests.slice(first);
      const summaries = sent.filter(isSummaryOnConversationRequest);
      expect(summaries).toHaveLength(1);
      const summary = summaries[0]!;
      const turn = turnBefore(sent, summary);
      expect(lastUserText(turn)).toBe('walk me through the deployment');
      // Byte for byte, markers included, up to the turn's last marker; then its reply and the request.
      const turnPrefix = upToLastMarker(turn);
      expect(
        promptBlocks(summary)
          .slice(0, turnPrefix.length)
          .map((b) => b.json),
      ).toEqual(turnPrefix);
      expect(summary.body.model).toBe(turn.body.model);
      const messages = summary.body.messages!;
      expect(messages).toHaveLength(turn.body.messages!.length + 2);
      expect(messages[messages.length - 2]!.role).toBe('assistant');
      expect(JSON.stringify(messages[messages.length - 2]!.content)).toContain('build-7.example.net');
      // No marker after the turn's: nothing of the summary request is written to the cache.
      expect(
        promptBlocks(summary)
          .slice(turnPrefix.length)
          .some((b) => b.marked),
      ).toBe(false);
      const ask = JSON.stringify(messages[messages.length - 1]!.content);
      expect(ask).toContain('Summarize the conversation above into a structured checkpoint');
      expect(ask).toContain('Preserve identifiers exactly as written');

      // The fake billed the prefix as a cache read, and the row says what was billed.
      const billed = reported(
        sent.filter(
          (r) =>
            r.index >= summary.index &&
            (isSummaryOnConversationRequest(r) ||
              JSON.stringify(r.body.system ?? '').includes('context checkpoint summaries')),
        ),
      );
      // What the turn cached up to its last marker (read or written) is read back; its reply and the request are input.
      const turnBilled = reported([turn]);
      const summaryBilled = reported([summary]);
      expect(summaryBilled.cacheRead).toBe(turnBilled.cacheRead + turnBilled.cacheWrite);
      expect(summaryBilled.input).toBeLessThan(summaryBilled.cacheRead);
      expect(summaryBilled.cacheWrite).toBe(0);
      const row = (await compactionRows(db.store, agent))[0]!;
      expect({
        input: row.summarizer_input_tokens,
        cacheRead: row.summarizer_cache_read_tokens,
        cacheWrite: row.summarizer_cache_write_tokens,
        output: row.summarizer_output_tokens,
      }).toEqual(billed);
      expect(row.summarizer_tokens).toBe(billed.input + billed.cacheRead + billed.cacheWrite + billed.output);

      // A later turn, then a manual compaction: the same on that turn's request.
      await client.sendMessage(key, 'thanks, one more question about the rollout');
      const beforeManual = fake.requests.length;
      const manual = await client.compact(key);
      expect(manual.status).toBe('succeeded');
      const manualSent = fake.requests.slice(beforeManual);
      const manualSummary = manualSent.find(isSummaryOnConversationRequest)!;
      expect(manualSummary).toBeDefined();
      const manualTurn = turnBefore(fake.requests, manualSummary);
      expect(lastUserText(manualTurn)).toBe('thanks, one more question about the rollout');
      const manualPrefix = upToLastMarker(manualTurn);
      expect(
        promptBlocks(manualSummary)
          .slice(0, manualPrefix.length)
          .map((b) => b.json),
      ).toEqual(manualPrefix);
      const manualTurnBilled = reported([manualTurn]);
      expect(reported([manualSummary]).cacheRead).toBe(manualTurnBilled.cacheRead + manualTurnBilled.cacheWrite);
      const manualRow = (await compactionRows(db.store, agent)).find((r) => r.trigger === 'manual')!;
      expect(manualRow.summarizer_cache_read_tokens).toBeGreaterThan(10 * manualRow.summarizer_input_tokens);

      // `keel compactions show` and `keel status` say what the compactions were billed.
      let shown = '';
      await compactionsShow({ db: db.store.db, agentId: agent, id: manualRow.id, write: (t) => void (shown += t) });
      expect(shown).toContain(
        `billed            ${manualRow.summarizer_input_tokens.toLocaleString('en-US')} input · ${manualRow.summarizer_cache_read_tokens.toLocaleString('en-US')} cache read`,
      );
      const read = row.summarizer_cache_read_tokens + manualRow.summarizer_cache_read_tokens;
      const line = await sessionCompactionBillingLine(db.store.db, agent, key);
      expect(line).toContain(`compactions billed · ${row.summarizer_calls + manualRow.summarizer_calls} call`);
      expect(line).toContain(`${read.toLocaleString('en-US')} cache read`);
    });
  }, 600_000);
});
