/**
 * One source for each number: `keel status`, `keel sessions`, `keel profile` and the chat's bar read a
 * session's context tokens, its split and its turns through the same functions, so they agree after a
 * turn, after a manual compaction and after `/new`. The commands' own functions are called here
 * (against the test's worker and database), as their processes call them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { ToolRegistry } from '../../src/tools/registry';
import { loadKeelSettings } from '../../src/config/agent-config';
import { listSessions } from '../../src/operations/sessions/list-sessions';
import { statusOverhead } from '../../src/cli/profile';
import { profileStoredSession } from '../../src/operations/sessions/session-profile';
import { profileLines } from '../../src/profile/session-profile';
import { contextBar } from '../../src/cli/context-bar';

const suite = integrationSuite();

const lookupTool = () =>
  new ToolRegistry().register({
    name: 'lookup',
    description: 'Looks a word up in the dictionary',
    input: z.object({ word: z.string() }),
    run: async ({ word }) => `${word}: a word`,
  });

describe.each(testDatabases())('status, sessions, profile and the chat bar on $name', (database) => {
  const db = suite.storePerTest(database);
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'keel-figures-'));
    await writeFile(join(workspace, 'TOOLS.md'), 'Tool notes. '.repeat(100));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('agree on context tokens, the split and turns after turns, a manual compaction and /new', async () => {
    await suite.withWorker(
      db.store,
      { tools: lookupTool(), config: { workspaceDir: workspace } },
      async ({ client, fake, taskQueue }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        // The commands' settings: this worker's Temporal and task queue, the same (default) window.
        const settings = loadKeelSettings({
          env: { ...suite.env.processEnv, KEEL_TASK_QUEUE: taskQueue },
          overrides: {},
        });
        const listed = async () => (await listSessions(db.store.db, settings, { agentId: agent, sessionKey: key }))[0]!;

        fake.enqueue(fakeReply.text('noted'), fakeReply.text('noted again'));
        await client.sendMessage(key, realisticMessage('We plan the billing migration.'));
        await client.sendMessage(key, realisticMessage('Then we switch the traffic.'));

        // After turns: the bar the chat prints is the one status prints, and sessions shows the same figure.
        let status = await client.getStatus(key);
        let row = await listed();
        expect(row.contextTokens).toBe(status.contextTokens);
        expect(contextBar(row)).toBe(contextBar(status));
        expect(row.turns).toBe(2);

        // The row's split (the console's fleet) has status's prompt parts; its history is the rest of the
        // headline, so its parts add up to the bar. The cache figures are status's own.
        const split = status.contextSplit!;
        expect(row.contextSplit).toEqual({
          systemTokens: split.systemTokens,
          bootstrapTokens: split.bootstrapTokens,
          toolTokens: split.toolTokens,
          historyTokens: row.contextTokens - split.systemTokens - split.bootstrapTokens - split.toolTokens,
        });
        expect(row.contextSplit!.historyTokens).toBeGreaterThanOrEqual(split.historyTokens);
        expect(row.promptCache).toEqual(status.promptCache);
        expect(row.promptCache!.inputTokens).toBeGreaterThan(0);

        // Profile's baseline is the split status reports (system + workspace + tools), not a share of the window.
        expect(split.bootstrapTokens).toBeGreaterThan(0);
        const overhead = await statusOverhead(settings.defaults, key);
        expect(overhead).toEqual(split);
        const profile = await profileStoredSession(db.store.db, settings, {
          sessionKey: key,
          ...(overhead ? { overhead } : {}),
        });
        const baseline = split.systemTokens + split.bootstrapTokens + split.toolTokens;
        expect(profile.estimate.baseline).toEqual({
          systemTokens: split.systemTokens,
          bootstrapTokens: split.bootstrapTokens,
          toolTokens: split.toolTokens,
        });
        expect(profile.estimate.parts[0]).toEqual({
          part: 'fixed baseline',
          count: 1,
          low: baseline,
          high: baseline,
          measured: baseline,
        });
        expect(profileLines(profile).join('\n')).toMatch(
          /fixed baseline: [\d.]+k? tokens, as `keel status` measures it \(system /,
        );
        expect(profileLines(profile).join('\n')).not.toMatch(/~10k–30k/);

        // After a manual compaction: the headline is the sum of its split, everywhere.
        fake.respondWith((request) =>
          isSummarizerRequest(request)
            ? goodSummarizer(request)
            : isFlushRequest(request)
              ? fakeReply.text('NO_REPLY')
              : undefined,
        );
        const compaction = await client.compact(key, { keepRecentTokens: 0 });
        fake.respondWith(undefined);
        expect(compaction.status).toBe('succeeded');
        status = await client.getStatus(key);
        row = await listed();
        expect(status.contextTokens).toBe(
          status.contextSplit!.systemTokens +
            status.contextSplit!.bootstrapTokens +
            status.contextSplit!.toolTokens +
            compaction.tokensAfter,
        );
        expect(row.contextTokens).toBe(status.contextTokens);
        expect(contextBar(row)).toBe(contextBar(status));
        expect(row.contextSplit).toEqual(status.contextSplit);
        expect(row.promptCache).toEqual(status.promptCache);

        // After /new: the new transcript has no turn yet, and sessions and status count it the same way.
        fake.enqueue(fakeReply.text('fresh start'));
        await client.sendMessage(key, '/new hello again');
        row = await listed();
        expect(row.turns).toBe(1);
        status = await client.getStatus(key);
        expect(row.contextTokens).toBe(status.contextTokens);
        // The new session id's counters: its one turn's prompt tokens.
        expect(row.promptCache).toEqual(status.promptCache);
      },
    );
  });
});
