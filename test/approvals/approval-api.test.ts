/**
 * Approvals over the HTTP API on the real path: an in-process worker whose agent config asks for
 * approval by pattern (`delete_*`), the dev server, the fake model. Every answer is checked against
 * the server's own /openapi.json by `startApi`'s client.
 */
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { waitUntil } from '../support/wait-until';
import { startApi } from '../support/http-api';
import { ToolRegistry } from '../../src/tools/registry';

const suite = integrationSuite();

describe.each(testDatabases())('tool approvals over the HTTP API on $name', (database) => {
  const db = suite.storePerTest(database);

  it('lists the waiting call, takes the first decision, answers a second with it, and refuses unknown ids and bad bodies', async () => {
    let runs = 0;
    const tools = new ToolRegistry().register({
      name: 'delete_rows',
      description: 'Deletes rows',
      input: z.object({ table: z.string() }),
      run: async () => {
        runs++;
        return 'deleted';
      },
    });
    await suite.withWorker(db.store, { tools, config: { approvalTools: ['delete_*'] } }, async (t) => {
      const api = await startApi(suite.env, t);
      try {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const first = t.fake.requests.length;
        t.fake.enqueue(
          fakeReply.toolUse([{ id: 'toolu_del', name: 'delete_rows', input: { table: 'users' } }]),
          fakeReply.text('kept the rows'),
        );
        const reply = t.client.sendMessage(key, 'delete the users table');

        const listed = await waitUntil('the call waits for approval', async () => {
          const r = await api.call('GET', '/v1/approvals', { query: { agent } });
          return r.body.approvals.length === 1 ? r.body.approvals[0] : undefined;
        });
        expect(listed).toMatchObject({
          agentId: agent,
          sessionKey: key,
          toolName: 'delete_rows',
          arguments: { table: 'users' },
        });
        const status = await api.call('GET', '/v1/sessions/{sessionKey}', { params: { sessionKey: key } });
        expect(status.body.pendingApprovals).toEqual([
          expect.objectContaining({ approvalId: listed.id, toolName: 'delete_rows' }),
        ]);

        const unauthorized = await api.call('POST', '/v1/approvals/{id}', {
          params: { id: listed.id },
          body: { decision: 'approve' },
          token: null,
        });
        expect(unauthorized.status).toBe(401);
        const bad = await api.call('POST', '/v1/approvals/{id}', {
          params: { id: listed.id },
          body: { decision: 'maybe' },
        });
        expect(bad.status).toBe(400);
        expect(bad.body.field).toBe('decision');

        const denied = await api.call('POST', '/v1/approvals/{id}', {
          params: { id: listed.id },
          body: { decision: 'deny', reason: 'keep them', by: 'dana' },
        });
        expect(denied.status).toBe(200);
        expect(denied.body).toMatchObject({
          approvalId: listed.id,
          status: 'denied',
          decidedBy: 'dana',
          reason: 'keep them',
        });
        expect((await reply).reply).toBe('kept the rows');

        // Decided and its turn over: the stored row answers with the first outcome.
        const again = await api.call('POST', '/v1/approvals/{id}', {
          params: { id: listed.id },
          body: { decision: 'approve' },
        });
        expect(again.status).toBe(200);
        expect(again.body).toEqual(denied.body);
        const unknown = await api.call('POST', '/v1/approvals/{id}', {
          params: { id: 'no-such-id' },
          body: { decision: 'approve' },
        });
        expect(unknown.status).toBe(404);
        expect((await api.call('GET', '/v1/approvals', { query: { agent } })).body).toEqual({ approvals: [] });

        expect(runs).toBe(0);
        const toolResult = t.fake.requests[first + 1]!.body.messages!.at(-1)!.content.find(
          (b: { type: string }) => b.type === 'tool_result',
        );
        expect(toolResult).toMatchObject({
          tool_use_id: 'toolu_del',
          is_error: true,
          content: [{ type: 'text', text: 'tool "delete_rows" was not run: the call was denied by dana: keep them' }],
        });
      } finally {
        await api.close();
      }
    });
  });
});
