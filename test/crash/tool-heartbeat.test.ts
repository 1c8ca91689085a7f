/**
 * The tool heartbeat timeout exists so a dead worker is noticed fast (the crash tests shorten it).
 * It must not also cut off a live tool that simply runs longer than that timeout.
 */
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { ToolRegistry } from '../../src/tools/registry';

/** The tool heartbeat timeout of the test, and a tool that runs well past it without heartbeating. */
const TOOL_HEARTBEAT_TIMEOUT_MS = 1_500;
const SLOW_TOOL_MS = 4_000;

const suite = integrationSuite();

describe.each(testDatabases().slice(0, 1))(
  'a live tool slower than the tool heartbeat timeout, on $name',
  (database) => {
    const db = suite.storePerTest(database);

    // Regression: runTool used not to heartbeat while the tool ran (ToolContext offers tools no heartbeat),
    // so every attempt of a tool slower than toolHeartbeatTimeoutMs timed out while still running: the
    // tool ran again, concurrently, up to maximumAttempts, then the turn failed.
    it('runs the tool once and finishes the turn', async () => {
      const keys: string[] = [];
      const tools = new ToolRegistry().register({
        name: 'slow_job',
        description: 'Takes a while (test tool).',
        input: z.object({}),
        async run(_input, ctx) {
          keys.push(ctx.idempotencyKey);
          await new Promise((r) => setTimeout(r, SLOW_TOOL_MS));
          return 'slow job done';
        },
      });
      await suite.withWorker(
        db.store,
        { tools, tuning: { toolHeartbeatTimeoutMs: TOOL_HEARTBEAT_TIMEOUT_MS } },
        async ({ client, fake }) => {
          fake.enqueue(
            fakeReply.toolUse([{ id: 'toolu_slow', name: 'slow_job', input: {} }]),
            fakeReply.text('all done'),
          );
          const result = await client.sendMessage(
            `agent:slow${Math.random().toString(36).slice(2, 8)}:main`,
            'run the slow job',
          );
          expect(result.reply).toBe('all done');
          expect(keys).toHaveLength(1);
          fake.assertScriptConsumed();
        },
      );
    });
  },
);
