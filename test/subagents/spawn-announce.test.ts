/**
 * Subagents on the real path: the model calls `sessions_spawn`, the parent's session workflow starts
 * each child as a child workflow, the children run tools and finish, and each result reaches the
 * parent as exactly one entry that wakes it for a turn.
 */
import { Client } from '@temporalio/client';
import { integrationSuite } from '../support/integration';
import { testDatabases } from '../support/databases';
import { allEntries } from '../support/store-readers';
import { waitUntil } from '../support/wait-until';
import { getSession } from '../../src/store/sessions-repo';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { CITIES, PARENT_PROMPT, isChildRequest, lookupTools, messageText, subagentResponder } from './subagent-script';
import type { Store } from '../../src/store/connect';
import type { MessageEntry, UserMessage } from '../../src/context/types';

const PARENT = 'agent:main:main';

/** The parent's user entries that are subagent announces, by text. */
export async function announceTexts(store: Store, sessionKey = PARENT): Promise<string[]> {
  const session = await getSession(store.db, 'main', sessionKey);
  if (!session) return [];
  return (await allEntries(store.db, 'main', session.session_id))
    .map((row) => (row.payload as unknown as MessageEntry).message)
    .filter((m): m is UserMessage => m?.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[Subagent'))
    .map((m) => m.content as string);
}

const suite = integrationSuite();

describe.each(testDatabases())('subagents on $name', (database) => {
  const db = suite.storePerTest(database);

  it('spawns three children in one turn; each announces once and the parent answers each', () =>
    suite.withWorker(db.store, { tools: lookupTools() }, async ({ client, fake, store }) => {
      fake.respondWith(subagentResponder());
      const first = await client.sendMessage(PARENT, PARENT_PROMPT);
      expect(first.reply).toBe('Waiting for my subagents.');

      const announces = await waitUntil('three announces in the parent', async () => {
        const texts = await announceTexts(store);
        return texts.length >= 3 && texts;
      });
      // The parent answers each announce in its own turn.
      await waitUntil('the parent to answer every announce', async () => (await client.getStatus(PARENT)).turnsCompleted === 4 && (await client.getStatus(PARENT)).queuedTurns === 0);
      expect(announces).toHaveLength(3);
      for (const city of CITIES) {
        const mine = announces.filter((t) => t.includes(`"${city}"`));
        expect(mine).toHaveLength(1);
        expect(mine[0]).toContain(`${city} has population ${city.length * 100_000}.`);
        expect(mine[0]).toMatch(/sessions_history with sessionKey "agent:main:subagent:[0-9a-f-]{36}"/);
      }
      expect((await announceTexts(store)).length).toBe(3);

      // What landed in PostgreSQL: three finished runs, one claimed announce each.
      const runs = await store.db.selectFrom('subagent_runs').selectAll().execute();
      expect(runs.map((r) => [r.label, r.status, r.mode, r.depth]).sort()).toEqual(CITIES.map((c) => [c, 'done', 'run', 1]).sort());
      expect(runs.every((r) => r.ended_at !== null && r.workflow_id === sessionWorkflowId('main', r.child_session_key))).toBe(true);
      const claims = await store.db.selectFrom('subagent_announces').selectAll().execute();
      expect(claims.map((c) => c.subagent_id).sort()).toEqual(runs.map((r) => r.id).sort());

      // What the model saw: each child got its task as its first message, a minimal prompt, and the lookup tool.
      const childRequests = fake.requests.filter(isChildRequest);
      const firstOfEach = childRequests.filter((r) => r.body.messages!.length === 1);
      expect(firstOfEach.map((r) => messageText(r.body.messages![0])).sort()).toEqual(CITIES.map((c) => `Look up ${c} and report its population.`).sort());
      const childSystem = JSON.stringify(firstOfEach[0]!.body.system);
      expect(childSystem).not.toContain('## Messaging');
      expect(firstOfEach[0]!.body.tools!.map((t) => t.name)).toContain('lookup');
      // The parent's tools carry the subagent tools with their schemas.
      const parentFirst = fake.requests.find((r) => !isChildRequest(r))!;
      const spawnTool = parentFirst.body.tools!.find((t) => t.name === 'sessions_spawn')!;
      expect(spawnTool.input_schema.required).toEqual(['task']);
      expect(parentFirst.body.tools!.map((t) => t.name)).toEqual(expect.arrayContaining(['sessions_send', 'sessions_history', 'subagents']));

      // Temporal: each child is a child workflow of the parent's session workflow, filterable by its parent.
      const child = runs[0]!;
      const described = await new Client({ connection: suite.env.connection }).workflow.getHandle(child.workflow_id!).describe();
      expect(described.parentExecution?.workflowId).toBe(sessionWorkflowId('main', PARENT));
      expect(described.status.name).toBe('COMPLETED');
      expect(described.searchAttributes.KeelParentSessionKey).toEqual([PARENT]);
    }));
});
