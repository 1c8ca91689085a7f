/**
 * A subagent's life beyond the happy path, through the real worker: limits refused as tool errors,
 * a `session` child steered again after its run closed, a kill the parent hears as the outcome, a
 * child finishing while its parent compacts and continues-as-new, a reset that stops children, and a
 * kill that stops a child's own children with it.
 */
import { integrationSuite } from '../support/integration';
import { testDatabases } from '../support/databases';
import { waitUntil } from '../support/wait-until';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing';
import { getSession } from '../../src/store/sessions-repo';
import { allEntries } from '../support/store-readers';
import { isChildRequest, lookupTools, messageText, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';
import type { Store } from '../../src/store/connect';
import type { MessageEntry, ToolResultMessage } from '../../src/context/types';

// Each test its own parent session: a session workflow of an earlier test may still be open.
let PARENT = '';
const suite = integrationSuite();

async function toolResults(store: Store, sessionKey: string): Promise<ToolResultMessage[]> {
  const session = await getSession(store.db, 'main', sessionKey);
  if (!session) return [];
  return (await allEntries(store.db, 'main', session.session_id))
    .map((r) => (r.payload as unknown as MessageEntry).message)
    .filter((m): m is ToolResultMessage => m?.role === 'toolResult');
}

const SUBAGENT_TOOLS = ['sessions_spawn', 'sessions_send', 'sessions_history', 'subagents'];

const lastText = (r: FakeRequest) => messageText(r.body.messages![r.body.messages!.length - 1]);

describe.each(testDatabases())('subagent lifecycle on $name', (database) => {
  const db = suite.storePerTest(database);
  let n = 0;
  beforeEach(() => {
    PARENT = `agent:main:${database.name}-${++n}`;
  });

  it('refuses a spawn past the fan-out limit and below the depth limit as tool errors the model reads', () =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), config: { subagentMaxChildren: 2 } },
      async ({ client, fake, store }) => {
        // The suite's fake serves every test: this test's requests start here.
        const before = fake.requests.length;
        // The children try to spawn grandchildren: depth 2 is over the default limit of 1.
        const base = subagentResponder();
        fake.respondWith((r) => {
          // The parent also asks for another agent, which its config does not allow (subagentAllowAgents).
          if (!isChildRequest(r) && r.body.messages!.length === 1) {
            const spawns = base(r) as Extract<FakeStep, { kind: 'message' }>;
            const writer = { task: 'Write it up', agentId: 'writer' };
            return {
              ...spawns,
              content: [
                ...spawns.content,
                { type: 'tool_use', id: 'toolu_writer', name: 'sessions_spawn', input: writer },
              ],
            };
          }
          if (isChildRequest(r) && r.body.messages!.length === 1)
            return fakeReply.toolUse([
              { id: 'toolu_grandchild', name: 'sessions_spawn', input: { task: 'Look up nothing' } },
            ]);
          if (isChildRequest(r) && r.body.messages!.length === 3) return fakeReply.text(`child saw: ${lastText(r)}`);
          return base(r);
        });
        await client.sendMessage(PARENT, 'Research the cities Oslo, Lima and Pune');
        const parentResults = await toolResults(store, PARENT);
        expect(parentResults.map((m) => Boolean(m.isError))).toEqual([false, false, true, true]);
        expect(JSON.stringify(parentResults[2]!.content)).toContain('2 subagents are already running');
        expect(JSON.stringify(parentResults[2]!.content)).toContain('subagentMaxChildren');
        expect(JSON.stringify(parentResults[3]!.content)).toContain(
          'agent \\"main\\" may not spawn agent \\"writer\\" (it may spawn: main only)',
        );
        // What the parent's model read next: the refusal, naming the setting to change.
        const afterSpawns = fake.requests
          .slice(before)
          .find((r) => !isChildRequest(r) && r.body.messages!.length === 3)!;
        expect(JSON.stringify(afterSpawns.body.messages![2])).toContain('add \\"writer\\" to subagentAllowAgents');
        await waitUntil('two announces', async () => (await announceTexts(store, PARENT)).length === 2);
        const children = await store.db.selectFrom('subagent_runs').selectAll().execute();
        expect(children).toHaveLength(2);
        for (const child of children) {
          const refused = await toolResults(store, child.child_session_key);
          expect(refused).toHaveLength(1);
          expect(refused[0]!.isError).toBe(true);
          expect(JSON.stringify(refused[0]!.content)).toContain('spawn depth 2 is over this agent');
        }
        // What the children's model saw next: the refusal as the tool result.
        expect(
          fake.requests
            .slice(before)
            .filter((r) => isChildRequest(r) && r.body.messages!.length === 3)
            .map(lastText)
            .join(),
        ).toContain('subagentMaxDepth');
        await waitUntil('the parent to answer both', async () => (await client.getStatus(PARENT)).turnsCompleted === 3);
      },
    ));

  it.each([
    [1, 'sends a child at the limit none of the subagent tools, and its parent all four', []],
    [2, 'sends a child below the limit the subagent tools too', SUBAGENT_TOOLS],
  ])('subagentMaxDepth %i: %s', (subagentMaxDepth, _title, childSubagentTools) =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), config: { subagentMaxDepth } },
      async ({ client, fake, store }) => {
        const before = fake.requests.length;
        fake.respondWith(subagentResponder({ cities: ['Oslo'] }));
        await client.sendMessage(PARENT, 'Research the cities Oslo, Lima and Pune');
        await waitUntil('the announce', async () => (await announceTexts(store, PARENT)).length === 1);
        await waitUntil('the parent to answer it', async () => (await client.getStatus(PARENT)).turnsCompleted === 2);
        const requests = fake.requests.slice(before);
        const subagentToolsOf = (r: FakeRequest) =>
          (r.body.tools ?? []).map((t) => String(t.name)).filter((name) => SUBAGENT_TOOLS.includes(name));
        const parentCalls = requests.filter((r) => !isChildRequest(r));
        const childCalls = requests.filter(isChildRequest);
        expect(parentCalls.length).toBeGreaterThanOrEqual(2);
        expect(childCalls).toHaveLength(2);
        for (const r of parentCalls) expect(subagentToolsOf(r)).toEqual(SUBAGENT_TOOLS);
        for (const r of childCalls) {
          expect(subagentToolsOf(r)).toEqual(childSubagentTools);
          // The application's tool is still there, and the prompt's Tooling section names what is sent.
          expect((r.body.tools ?? []).map((t) => t.name)).toContain('lookup');
          expect(JSON.stringify(r.body.system).includes('sessions_spawn')).toBe(childSubagentTools.length > 0);
        }
      },
    ),
  );

  it('steers a session-mode child again after its run closed, and the parent hears each answer once', () =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), tuning: { idleCloseMs: 1_500 } },
      async ({ client, fake, store }) => {
        let steered = false;
        const base = subagentResponder({
          cities: ['Oslo'],
          spawnInput: (city) => ({ task: `Look up ${city} and stay around.`, label: city, mode: 'session' }),
        });
        fake.respondWith((r) => {
          // After the first announce, the parent steers its child.
          if (!isChildRequest(r) && lastText(r).startsWith('[Subagent') && !steered) {
            steered = true;
            // Late enough that the child's run has closed idle (idleCloseMs 1.5 s): the steer starts it again.
            const target = /sessionKey "([^"]+)"/.exec(lastText(r))![1]!;
            return {
              ...fakeReply.toolUse([
                { id: 'toolu_steer', name: 'sessions_send', input: { target, message: 'steer: now Bergen' } },
              ]),
              delayMs: 3_000,
            };
          }
          if (!isChildRequest(r) && lastText(r).includes('sent to subagent')) return fakeReply.text('Steered it.');
          return base(r);
        });
        await client.sendMessage(PARENT, 'Research the cities Oslo, Lima and Pune');
        const run = await waitUntil('the run row', async () =>
          store.db.selectFrom('subagent_runs').selectAll().executeTakeFirst(),
        );
        expect(run.mode).toBe('session');
        // The child's run closes idle before it is addressed again; the steer starts it again.
        const announces = await waitUntil('two announces', async () => {
          const texts = await announceTexts(store, PARENT);
          return texts.length >= 2 && texts;
        });
        expect(announces[0]).toContain('Oslo has population');
        expect(announces[0]).toContain('sessions_send steers it');
        expect(announces[1]).toContain('Oslo steered: steer: now Bergen');
        await waitUntil(
          'the parent to settle',
          async () =>
            (await client.getStatus(PARENT)).queuedTurns === 0 && (await client.getStatus(PARENT)).turnsCompleted === 3,
        );
        expect(await announceTexts(store, PARENT)).toHaveLength(2);
        expect((await store.db.selectFrom('subagent_runs').select('status').executeTakeFirstOrThrow()).status).toBe(
          'idle',
        );
        // The child's session ran two workflow runs: the steer started a fresh one after the idle close.
        const runs = [];
        for await (const w of client.temporal.workflow.list({ query: `WorkflowId = '${run.workflow_id}'` }))
          runs.push(w.type);
        expect(runs.length).toBeGreaterThanOrEqual(2);
        // Both as a subagent: the parent's spawn, and the steer's start after the idle close.
        expect(new Set(runs)).toEqual(new Set(['subagentWorkflow']));
      },
    ));

  it('kills a running child with the subagents tool, and its own child with it; the parent hears the kill', () =>
    suite.withWorker(
      db.store,
      { tools: lookupTools(), tuning: { modelHeartbeatTimeoutMs: 2_000 }, config: { subagentMaxDepth: 2 } },
      async ({ client, fake, store }) => {
        let child = '';
        const base = subagentResponder({ cities: ['Lima'] });
        const isGrandchildRequest = (r: FakeRequest) => messageText(r.body.messages?.[0]).startsWith('Look deeper');
        fake.respondWith((r) => {
          // The grandchild's model call, and the child's after spawning it, hang until the kill cancels them.
          if (isGrandchildRequest(r)) return { ...fakeReply.text('never'), delayMs: 60_000 };
          if (isChildRequest(r) && r.body.messages!.length === 1)
            return fakeReply.toolUse([
              { id: 'toolu_deeper', name: 'sessions_spawn', input: { task: 'Look deeper into Lima', label: 'deeper' } },
            ]);
          if (isChildRequest(r)) return { ...fakeReply.text('never'), delayMs: 60_000 };
          if (!isChildRequest(r) && lastText(r).startsWith('kill me'))
            return fakeReply.toolUse([
              { id: 'toolu_kill', name: 'subagents', input: { action: 'kill', target: child } },
            ]);
          if (!isChildRequest(r) && lastText(r).includes('kill requested')) return fakeReply.text('Killed it.');
          return base(r);
        });
        await client.sendMessage(PARENT, 'Research the cities Oslo, Lima and Pune');
        const runOf = (parent: string) =>
          store.db.selectFrom('subagent_runs').selectAll().where('parent_session_key', '=', parent).executeTakeFirst();
        const run = await waitUntil('the child to spawn its own child', async () => runOf(PARENT));
        child = run.id;
        const grandchild = await waitUntil(
          'the grandchild and the child (after its spawn) to be calling their models',
          async () =>
            fake.requests.some(isGrandchildRequest) &&
            fake.requests.some((r) => isChildRequest(r) && r.body.messages!.length === 3) &&
            (await runOf(run.child_session_key)),
        );
        expect((await client.sendMessage(PARENT, 'kill me the child')).reply).toBe('Killed it.');
        const killResult = (await toolResults(store, PARENT)).at(-1)!;
        expect(JSON.stringify(killResult.content)).toContain('1 of its own subagents killed with it');
        const [announce] = await waitUntil('the kill announce', async () => {
          const texts = await announceTexts(store, PARENT);
          return texts.length === 1 && texts;
        });
        expect(announce).toContain('was killed');
        const closedAs = (workflowId: string) =>
          waitUntil(`${workflowId} to close`, async () => {
            const { status } = await client.temporal.workflow.getHandle(workflowId).describe();
            return status.name !== 'RUNNING' && status.name;
          });
        for (const r of [run, grandchild]) {
          const row = await store.db
            .selectFrom('subagent_runs')
            .selectAll()
            .where('id', '=', r.id)
            .executeTakeFirstOrThrow();
          expect(row.status).toBe('killed');
          expect(row.ended_at).not.toBeNull();
          // A run announces its kill before it ends (it throws the cancellation after): its close may
          // land a moment after the announce, and then it must be a cancellation.
          expect(await closedAs(row.workflow_id!)).toBe('CANCELLED');
        }
        // The grandchild's kill announce (made before it closed) found its parent killed: it did not
        // start the child's session again.
        const childRuns = [];
        for await (const w of client.temporal.workflow.list({ query: `WorkflowId = '${run.workflow_id}'` }))
          childRuns.push(w.status.name);
        expect(childRuns).toEqual(['CANCELLED']);
        await waitUntil(
          'the parent to answer the kill',
          async () => (await client.getStatus(PARENT)).turnsCompleted === 3,
        );
      },
    ));
});
