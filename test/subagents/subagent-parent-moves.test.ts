/**
 * The parent does not stand still while its children work: it compacts, it continues-as-new, it is
 * reset. Every announce still lands once (or, after a reset, the children are stopped and say so).
 */
import { integrationSuite } from '../support/integration';
import { testDatabases } from '../support/databases';
import { waitUntil } from '../support/wait-until';
import { fakeReply } from '../../src/testing';
import { isFlushRequest, isSummarizerRequest } from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { getSession } from '../../src/store/sessions-repo';
import { allEntries } from '../support/store-readers';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { CITIES, PARENT_PROMPT, isChildRequest, lookupTools, messageText, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';
import type { CompactionEntry } from '../../src/context/types';

const suite = integrationSuite();

describe.each(testDatabases())('a parent that moves while its subagents work, on $name', (database) => {
  const db = suite.storePerTest(database);
  let n = 0;
  let PARENT = '';
  beforeEach(() => {
    PARENT = `agent:main:moves-${database.name}-${++n}`;
  });

  it('takes every announce once while it compacts and continues-as-new after each turn', () =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), tuning: { maxTurnsPerRun: 1 } },
      async ({ client, fake, store }) => {
        const before = fake.requests.length;
        // Oslo and Lima finish while the summarizer works; Pune is still out when the compaction is recorded.
        const base = subagentResponder({ childReplyDelayMs: (city) => (city === 'Pune' ? 12_000 : 1_500) });
        let summarizerCalls = 0;
        fake.respondWith((r) => {
          // The summary takes long enough for the children to finish while the parent compacts.
          if (isSummarizerRequest(r)) return { ...goodSummarizer(r), delayMs: summarizerCalls++ === 0 ? 4_000 : 0 };
          if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
          return base(r);
        });
        expect((await client.sendMessage(PARENT, PARENT_PROMPT)).reply).toBe('Waiting for my subagents.');
        const compaction = await client.compact(PARENT, { keepRecentTokens: 0 });
        expect(compaction.status).toBe('succeeded');

        await waitUntil('three announces', async () => (await announceTexts(store, PARENT)).length >= 3);
        await waitUntil(
          'the parent to answer them',
          async () =>
            (await client.getStatus(PARENT)).turnsCompleted === 4 && (await client.getStatus(PARENT)).queuedTurns === 0,
        );
        const texts = await announceTexts(store, PARENT);
        expect(texts).toHaveLength(3);
        for (const city of CITIES) expect(texts.filter((t) => t.includes(`"${city}"`))).toHaveLength(1);

        // The compaction lists the child still out when it was recorded (so it is not spawned again), not those that had finished.
        const session = (await getSession(store.db, 'main', PARENT))!;
        const rows = await allEntries(store.db, 'main', session.session_id);
        const summaries = rows
          .filter((r) => r.type === 'compaction')
          .map((r) => (r.payload as unknown as CompactionEntry).summary);
        expect(summaries).toHaveLength(1);
        expect(summaries[0]).toContain('Subagents in flight');
        expect(summaries[0]).toContain('Look up Pune');
        expect(summaries[0]).not.toContain('Look up Oslo');
        expect(summaries[0]).not.toContain('Look up Lima');
        // The spawn happened once: three children, whatever the parent compacted or continued.
        expect(
          fake.requests
            .slice(before)
            .filter(
              (r) =>
                !isSummarizerRequest(r) &&
                r.body.messages!.length === 1 &&
                messageText(r.body.messages![0]).startsWith(PARENT_PROMPT),
            ),
        ).toHaveLength(1);
        expect(await store.db.selectFrom('subagent_runs').select('id').execute()).toHaveLength(3);

        // The parent's workflow continued-as-new after every turn: the announces reached later runs.
        const runs: string[] = [];
        for await (const w of client.temporal.workflow.list({
          query: `WorkflowId = '${sessionWorkflowId('main', PARENT)}'`,
        }))
          runs.push(w.runId);
        expect(runs.length).toBeGreaterThanOrEqual(4);
      },
    ));

  it('stops the children of a reset session; they are recorded killed and say nothing to the new session', () =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), tuning: { modelHeartbeatTimeoutMs: 2_000 } },
      async ({ client, fake, store }) => {
        // The suite's fake serves every test: this test's requests start here.
        const before = fake.requests.length;
        const base = subagentResponder({ cities: ['Oslo', 'Lima'] });
        fake.respondWith((r) => {
          if (isChildRequest(r)) return { ...fakeReply.text('never'), delayMs: 60_000 };
          if (!isChildRequest(r) && JSON.stringify(r.body.messages).includes('fresh start'))
            return fakeReply.text('Fresh.');
          return base(r);
        });
        await client.sendMessage(PARENT, 'Research the cities Oslo, Lima and Pune');
        await waitUntil(
          'both children at their model',
          async () => fake.requests.slice(before).filter(isChildRequest).length >= 2,
        );
        expect((await client.sendMessage(PARENT, '/new fresh start')).reply).toBe('Fresh.');

        const runs = await waitUntil('both runs killed', async () => {
          const rows = await store.db.selectFrom('subagent_runs').selectAll().execute();
          return rows.every((r) => r.status === 'killed') && rows;
        });
        expect(runs.map((r) => r.result)).toEqual([
          'killed: the parent session was reset',
          'killed: the parent session was reset',
        ]);
        for (const run of runs) {
          await waitUntil(
            `child ${run.id} cancelled`,
            async () =>
              (await client.temporal.workflow.getHandle(run.workflow_id!).describe()).status.name === 'CANCELLED',
          );
        }
        // Nothing reached the new session, and the parent ran no turn for them.
        expect(await announceTexts(store, PARENT)).toEqual([]);
        expect((await client.getStatus(PARENT)).turnsCompleted).toBe(2);
      },
    ));
});
