/**
 * Approvals used the way a fleet uses them, many times over in one session: twelve turns, each
 * with a reply that calls a tool needing approval twice and a free tool once, every decision seeded
 * (approve or deny, in either order). After each turn: what ran is exactly what was approved, the
 * model read one result per call in its order (the denied ones as errors naming who and why), and
 * nothing is left pending. Then the transcript holds one decision entry per call.
 */
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { waitUntil } from '../support/wait-until';
import { ToolRegistry } from '../../src/tools/registry';
import { listPendingApprovals } from '../../src/store/approvals-repo';

const suite = integrationSuite();
const TURNS = 12;

/** A small seeded generator, so a failure names the decisions that led to it. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe.each(testDatabases())('many approvals in one session, on $name', (database) => {
  const db = suite.storePerTest(database);

  it('runs exactly the approved calls, tells the model every decision in order, and leaves nothing pending', async () => {
    const seed = Number(process.env.APPROVAL_MANY_SEED ?? Date.now() % 100_000);
    process.stderr.write(`approval-many seed: ${seed} (APPROVAL_MANY_SEED to repeat)\n`);
    const random = seeded(seed);
    const ran: string[] = [];
    const tools = new ToolRegistry()
      .register({
        name: 'delete_rows',
        description: 'Deletes rows',
        input: z.object({ table: z.string() }),
        run: async (input) => {
          ran.push(input.table);
          return `deleted ${input.table}`;
        },
      })
      .register({
        name: 'count_rows',
        description: 'Counts rows',
        input: z.object({ table: z.string() }),
        run: async (input) => {
          ran.push(`count ${input.table}`);
          return `${input.table}: 42 rows`;
        },
      });
    await suite.withWorker(db.store, { tools, config: { approvalTools: ['delete_*'] } }, async (t) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const expectedRuns: string[] = [];
      for (let turn = 0; turn < TURNS; turn++) {
        const tables = [`a${turn}`, `b${turn}`];
        const approve = tables.map(() => random() < 0.5);
        const first = t.fake.requests.length;
        t.fake.enqueue(
          fakeReply.toolUse([
            { id: `toolu_a${turn}`, name: 'delete_rows', input: { table: tables[0] } },
            { id: `toolu_c${turn}`, name: 'count_rows', input: { table: tables[0] } },
            { id: `toolu_b${turn}`, name: 'delete_rows', input: { table: tables[1] } },
          ]),
          fakeReply.text(`turn ${turn} done`),
        );
        const reply = t.client.sendMessage(key, `clean up ${tables.join(' and ')}`);
        // The calls wait one after another, in the reply's order.
        for (const [i, table] of tables.entries()) {
          const waiting = await waitUntil(`turn ${turn}: ${table} waits`, async () => {
            const rows = await listPendingApprovals(t.store.db, agent);
            return rows.length === 1 && (rows[0]!.arguments as { table: string }).table === table ? rows[0] : undefined;
          });
          const outcome = approve[i]
            ? await t.client.approve(key, waiting.id, { by: 'ops' })
            : await t.client.deny(key, waiting.id, { by: 'ops', reason: `keep ${table}` });
          expect(outcome.status).toBe(approve[i] ? 'approved' : 'denied');
        }
        expect((await reply).reply).toBe(`turn ${turn} done`);

        if (approve[0]) expectedRuns.push(tables[0]!);
        expectedRuns.push(`count ${tables[0]}`);
        if (approve[1]) expectedRuns.push(tables[1]!);
        expect([...ran].sort()).toEqual([...expectedRuns].sort());
        const results = t.fake.requests[first + 1]!.body.messages!.at(-1)!.content.filter(
          (b: { type: string }) => b.type === 'tool_result',
        );
        const denied = (table: string) => `tool "delete_rows" was not run: the call was denied by ops: keep ${table}`;
        expect(results).toEqual([
          expect.objectContaining({
            tool_use_id: `toolu_a${turn}`,
            content: [{ type: 'text', text: approve[0] ? `deleted ${tables[0]}` : denied(tables[0]!) }],
            ...(approve[0] ? {} : { is_error: true }),
          }),
          expect.objectContaining({
            tool_use_id: `toolu_c${turn}`,
            content: [{ type: 'text', text: `${tables[0]}: 42 rows` }],
          }),
          expect.objectContaining({
            tool_use_id: `toolu_b${turn}`,
            content: [{ type: 'text', text: approve[1] ? `deleted ${tables[1]}` : denied(tables[1]!) }],
            ...(approve[1] ? {} : { is_error: true }),
          }),
        ]);
        expect(await listPendingApprovals(t.store.db, agent)).toEqual([]);
      }
      const decisions = await t.store.db
        .selectFrom('transcript_entries')
        .select('payload')
        .where('agent_id', '=', agent)
        .where('type', '=', 'custom')
        .execute();
      const approvalEntries = decisions.filter(
        (d) => (d.payload as { customType?: string }).customType === 'tool_approval',
      );
      expect(approvalEntries).toHaveLength(2 * TURNS);
    });
  }, 300_000);
});
