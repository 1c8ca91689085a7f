/**
 * What the model sees besides the conversation: the system prompt by session kind, the workspace
 * files (changed files in the very next request, by watcher or by poll), memory saved by the flush
 * in one compaction cycle read back in the next, memory_search through a real tool loop, and the
 * budget left to the messages once the system prompt and tools are counted.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { testDeps } from '../support/keel-deps';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { ToolRegistry } from '../../src/tools/registry';
import { getSession, setModelOverride } from '../../src/store/sessions-repo';
import { localDate } from '../../src/context/prompt-sections';
import { effectiveReserveTokens } from '../../src/context/context-window';
import { prepareModelCall } from '../../activities/parts/prepare-model-call';
import { withBuiltinTools } from '../../activities/parts/builtin-tools';
import { depsForAgent } from '../../src/runtime/deps';
import { keel } from '../support/keel-cli';

const suite = integrationSuite();

const systemOf = (request: FakeRequest): string => {
  // With prompt caching (the default) the system prompt goes out as text blocks carrying cache_control.
  const system = request.body.system as string | Array<{ type: string; text: string }>;
  if (typeof system === 'string') return system;
  expect(system.every((b) => b.type === 'text')).toBe(true);
  return system.map((b) => b.text).join('');
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const lookupTool = () =>
  new ToolRegistry().register({
    name: 'lookup',
    description: 'Looks a word up in the dictionary',
    input: z.object({ word: z.string() }),
    run: async ({ word }) => `${word}: a word`,
  });

describe.each(testDatabases())('system prompt and memory on $name', (database) => {
  const db = suite.storePerTest(database);
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'keel-ws-'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('a main session gets the full prompt; a subagent session the minimal one; both with tools, workspace files and runtime', async () => {
    await writeFile(join(workspace, 'AGENTS.md'), 'Always answer in haiku.');
    await writeFile(join(workspace, 'SOUL.md'), 'Calm and precise.');
    const config = { workspaceDir: workspace, identity: 'You are Tern, the ops agent.', userTimeZone: 'Europe/Berlin' };
    await suite.withWorker(db.store, { tools: lookupTool(), config }, async ({ client, fake }) => {
      const agent = freshDurableAgent();
      fake.enqueue(fakeReply.text('main reply'), fakeReply.text('sub reply'));
      const before = fake.requests.length;
      await client.sendMessage(`agent:${agent}:main`, 'hello main');
      await client.sendMessage(`agent:${agent}:subagent:${randomUUID()}`, 'hello sub');
      const [main, sub] = fake.requests.slice(before).map(systemOf);

      expect(main!.startsWith('You are Tern, the ops agent.')).toBe(true);
      for (const section of [
        'Tooling',
        'Tool Call Style',
        'Safety',
        'Memory Recall',
        'Messaging',
        'Workspace',
        'Runtime',
      ]) {
        expect(main).toContain(`## ${section}\n`);
      }
      expect(main).toContain('- lookup: Looks a word up in the dictionary');
      expect(main).toContain('- memory_search: ');
      expect(main).toContain('NO_REPLY');
      expect(main).toContain('## AGENTS.md\n\nAlways answer in haiku.');
      expect(main).toContain('## SOUL.md\n\nCalm and precise.');
      expect(main).toContain(`Date: ${localDate(new Date(), 'Europe/Berlin')}`);
      expect(main).toContain('time zone Europe/Berlin');

      expect(sub!.startsWith('You are Tern, the ops agent.')).toBe(true);
      for (const section of ['Tooling', 'Workspace', 'Runtime']) expect(sub).toContain(`## ${section}\n`);
      for (const section of ['Tool Call Style', 'Safety', 'Memory Recall', 'Messaging'])
        expect(sub).not.toContain(`## ${section}\n`);
      expect(sub).toContain('- lookup: ');
      expect(sub).toContain('Always answer in haiku.');
      // The tools the prompt names are the tools sent.
      const builtins = [
        'memory_search',
        'history_search',
        'history_expand',
        'sessions_spawn',
        'sessions_send',
        'sessions_history',
        'subagents',
      ];
      expect(fake.requests[before]!.body.tools!.map((t) => t.name)).toEqual(['lookup', ...builtins]);
      for (const name of builtins) expect(main).toContain(`- ${name}: `);
    });
  });

  it('promptMode none sends the identity line only; workspaceAccess none reads no workspace file', async () => {
    await writeFile(join(workspace, 'AGENTS.md'), 'Secret workspace rules.');
    await suite.withWorker(
      db.store,
      { config: { workspaceDir: workspace, promptMode: 'none', workspaceAccess: 'none' } },
      async ({ client, fake }) => {
        fake.enqueue(fakeReply.text('ok'));
        const before = fake.requests.length;
        await client.sendMessage(`agent:${freshDurableAgent()}:main`, 'hi');
        expect(systemOf(fake.requests[before]!)).toBe('You are a personal assistant running inside Keel.');
      },
    );
    await suite.withWorker(
      db.store,
      { config: { workspaceDir: workspace, workspaceAccess: 'none' } },
      async ({ client, fake }) => {
        fake.enqueue(fakeReply.text('ok'));
        const before = fake.requests.length;
        await client.sendMessage(`agent:${freshDurableAgent()}:main`, 'hi');
        const system = systemOf(fake.requests[before]!);
        expect(system).toContain('## Runtime');
        expect(system).not.toContain('Secret workspace rules.');
        expect(system).not.toContain('## Workspace');
      },
    );
  });

  it.each([
    { how: 'the file watcher', config: { workspaceWatch: true, workspacePollSeconds: 0 }, waitMs: 0 },
    {
      how: 'the hash poll alone (watcher off)',
      config: { workspaceWatch: false, workspacePollSeconds: 0.05 },
      waitMs: 100,
    },
  ])(
    'a workspace file changed between two turns is in the second request, noticed by $how',
    async ({ config, waitMs }) => {
      await writeFile(join(workspace, 'USER.md'), 'The user is called Ada.');
      await suite.withWorker(db.store, { config: { workspaceDir: workspace, ...config } }, async ({ client, fake }) => {
        const key = `agent:${freshDurableAgent()}:main`;
        fake.enqueue(fakeReply.text('one'), fakeReply.text('two'), fakeReply.text('three'));
        const before = fake.requests.length;
        await client.sendMessage(key, 'first');
        expect(systemOf(fake.requests[before]!)).toContain('The user is called Ada.');

        // Edited in place.
        await writeFile(join(workspace, 'USER.md'), 'The user is called Grace.');
        await sleep(waitMs);
        await client.sendMessage(key, 'second');
        const second = systemOf(fake.requests[before + 1]!);
        expect(second).toContain('The user is called Grace.');
        expect(second).not.toContain('Ada');

        // Replaced by renaming over it, as editors save.
        await writeFile(join(workspace, 'USER.tmp'), 'The user is called Barbara.');
        await rename(join(workspace, 'USER.tmp'), join(workspace, 'USER.md'));
        await sleep(waitMs);
        await client.sendMessage(key, 'third');
        expect(systemOf(fake.requests[before + 2]!)).toContain('The user is called Barbara.');
      });
    },
  );

  it('what the flush saved in one compaction cycle is in the next cycle’s prompt, and memory_search finds it in a tool loop', async () => {
    await suite.withWorker(db.store, { config: { workspaceDir: workspace } }, async ({ client, fake }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const note = 'The deploy target of project Heron is cluster eu-west-7.';
      fake.enqueue(fakeReply.text('noted'));
      const before = fake.requests.length;
      await client.sendMessage(key, realisticMessage('We deploy Heron to eu-west-7.'));

      let flushRound = 0;
      fake.respondWith((request) => {
        if (isSummarizerRequest(request)) return goodSummarizer(request);
        if (isFlushRequest(request)) {
          flushRound++;
          if (flushRound > 1) return fakeReply.text('NO_REPLY');
          return fakeReply.toolUse([
            { id: 'toolu_w', name: 'memory_write', input: { text: note } },
            {
              id: 'toolu_c',
              name: 'memory_checkpoint',
              input: { currentTask: 'Deploying Heron', nextSteps: ['run the migration', 'switch traffic'] },
            },
          ]);
        }
        return undefined;
      });
      const compaction = await client.compact(key);
      expect(compaction.status).toBe('succeeded');
      fake.respondWith(undefined);

      const flush = fake.requests.slice(before).find(isFlushRequest)!;
      // The flush gets the turns' system prompt (same day, same files): the provider's cache holds it.
      expect(systemOf(flush)).toBe(systemOf(fake.requests[before]!));
      expect(flush.body.tools!.map((t) => t.name)).toEqual(['memory_write', 'memory_checkpoint']);
      const today = localDate(new Date(), 'UTC');
      const notes = await db.store.db.selectFrom('memory_notes').selectAll().where('agent_id', '=', agent).execute();
      expect(notes.map((n) => [n.day, n.text])).toEqual([[today, note]]);
      const checkpoints = await db.store.db
        .selectFrom('memory_checkpoints')
        .selectAll()
        .where('agent_id', '=', agent)
        .execute();
      expect(checkpoints).toHaveLength(1);
      expect(checkpoints[0]!.compaction_cycle).toBe(0);

      // Next cycle: the daily log, the pointer and the checkpoint are in the prompt; the model searches its memory.
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_s', name: 'memory_search', input: { query: 'heron deploy' } }]),
        fakeReply.text('eu-west-7'),
      );
      const next = fake.requests.length;
      const reply = await client.sendMessage(key, 'Where do we deploy Heron?');
      expect(reply.reply).toBe('eu-west-7');
      const system = systemOf(fake.requests[next]!);
      expect(system).toContain(`## memory/${today}.md`);
      expect(system).toContain(`- ${note}`);
      expect(system).toContain('## After Compaction');
      expect(system).toContain(`Notes you saved before it are in memory/${today}.md`);
      expect(system).toContain('- Current task: Deploying Heron');
      expect(system).toContain('- Next steps: run the migration; switch traffic');
      const toolResult = fake.requests[next + 1]!.body.messages!.at(-1)!.content.find(
        (b: { type: string }) => b.type === 'tool_result',
      );
      expect(JSON.stringify(toolResult.content)).toContain(`[${today}] ${note}`);
      expect((await getSession(db.store.db, agent, key))!.compaction_count).toBe(1);

      // The next cycle's flush saves no checkpoint: the old one is deleted and leaves the prompt.
      fake.respondWith((request) =>
        isSummarizerRequest(request)
          ? goodSummarizer(request)
          : isFlushRequest(request)
            ? fakeReply.text('NO_REPLY')
            : undefined,
      );
      await client.compact(key);
      fake.respondWith(undefined);
      expect(
        await db.store.db.selectFrom('memory_checkpoints').selectAll().where('agent_id', '=', agent).execute(),
      ).toEqual([]);
      fake.enqueue(fakeReply.text('ok'));
      const third = fake.requests.length;
      await client.sendMessage(key, 'and now?');
      const later = systemOf(fake.requests[third]!);
      expect(later).not.toContain('Current task');
      // The daily log still holds the note: memory outlives the checkpoint.
      expect(later).toContain(`- ${note}`);
    });
  });

  it.each([
    { flushes: 'with the session’s model override', config: {}, flushModel: 'claude-override' },
    {
      flushes: 'with memoryFlushModel, which wins over the override',
      config: { memoryFlushModel: 'claude-flush' },
      flushModel: 'claude-flush',
    },
  ])(
    'the flush of a session whose model is overridden runs $flushes, under the turns’ system prompt',
    async ({ config, flushModel }) => {
      await suite.withWorker(db.store, { config: { workspaceDir: workspace, ...config } }, async ({ client, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        fake.enqueue(fakeReply.text('hello'));
        await client.sendMessage(key, realisticMessage('hi'));
        expect(await setModelOverride(db.store.db, agent, key, 'claude-override')).toBe(true);
        fake.enqueue(fakeReply.text('still here'));
        const turn = fake.requests.length;
        await client.sendMessage(key, 'are you there?');
        expect(fake.requests[turn]!.body.model).toBe('claude-override');

        fake.respondWith((request) =>
          isSummarizerRequest(request)
            ? goodSummarizer(request)
            : isFlushRequest(request)
              ? fakeReply.text('NO_REPLY')
              : undefined,
        );
        const before = fake.requests.length;
        expect((await client.compact(key)).status).toBe('succeeded');
        fake.respondWith(undefined);
        const flushes = fake.requests.slice(before).filter(isFlushRequest);
        expect(flushes.map((r) => r.body.model)).toEqual([flushModel]);
        // The Runtime section names the turns' model: the flush's prompt is the turns' own.
        expect(systemOf(flushes[0]!)).toBe(systemOf(fake.requests[turn]!));
        expect(systemOf(flushes[0]!)).toContain('claude-override');
      });
    },
  );

  it('a read-only workspace is read into the prompt and the flush is skipped', async () => {
    await writeFile(join(workspace, 'MEMORY.md'), 'Long-term: the user prefers metric units.');
    await suite.withWorker(
      db.store,
      { config: { workspaceDir: workspace, workspaceAccess: 'ro' } },
      async ({ client, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        fake.enqueue(fakeReply.text('ok'));
        const before = fake.requests.length;
        await client.sendMessage(key, 'hi');
        expect(systemOf(fake.requests[before]!)).toContain('Long-term: the user prefers metric units.');
        expect(systemOf(fake.requests[before]!)).toContain('(read-only)');
        fake.respondWith((request) => (isSummarizerRequest(request) ? goodSummarizer(request) : undefined));
        await client.compact(key);
        fake.respondWith(undefined);
        expect(fake.requests.slice(before).some(isFlushRequest)).toBe(false);
        const rows = await db.store.db
          .selectFrom('compactions')
          .select('memory_flush')
          .where('agent_id', '=', agent)
          .execute();
        expect(rows.map((r) => r.memory_flush)).toEqual(['skipped: workspace-read-only']);
      },
    );
  });

  it('the system prompt and tools shrink the messages’ budget; status reports the split', async () => {
    await writeFile(join(workspace, 'TOOLS.md'), 'Tool notes. '.repeat(300));
    const window = 60_000;
    await suite.withWorker(
      db.store,
      { tools: lookupTool(), config: { workspaceDir: workspace, contextWindowTokens: window } },
      async ({ client, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        fake.enqueue(fakeReply.text('ok'));
        const sent = await client.sendMessage(key, 'how big is my context?');
        const status = await client.getStatus(key);
        const split = status.contextSplit!;
        expect(split.systemTokens).toBeGreaterThan(100);
        expect(split.bootstrapTokens).toBeGreaterThan(500);
        expect(split.toolTokens).toBeGreaterThan(20);
        expect(split.historyTokens).toBeGreaterThan(0);
        // contextTokens is everything sent plus the reply.
        expect(status.contextTokens).toBeGreaterThan(
          split.systemTokens + split.bootstrapTokens + split.toolTokens + split.historyTokens,
        );

        // The messages' budget is the window less the reserve, the system prompt and the tools.
        const deps = depsForAgent(
          withBuiltinTools(
            testDeps(db.store, fake.url, {
              tools: lookupTool(),
              config: { workspaceDir: workspace, contextWindowTokens: window },
            }),
          ),
          agent,
        );
        const session = await getSession(db.store.db, agent, key);
        const call = await prepareModelCall(deps, {
          agentId: agent,
          sessionKey: key,
          sessionId: session!.session_id,
          now: new Date().toISOString(),
          model: deps.config.model,
          window,
        });
        expect(call.split).toEqual({ ...split, historyTokens: call.split.historyTokens });
        expect(call.context.budget).toBe(
          window -
            effectiveReserveTokens(window, deps.config.reserveTokens) -
            split.systemTokens -
            split.bootstrapTokens -
            split.toolTokens,
        );
        expect(sent.reply).toBe('ok');
      },
    );
  });

  it('after a manual compaction, the status headline is the sum of its split', async () => {
    await suite.withWorker(
      db.store,
      { tools: lookupTool(), config: { workspaceDir: workspace } },
      async ({ client, fake }) => {
        const key = `agent:${freshDurableAgent()}:main`;
        fake.enqueue(fakeReply.text('ok'), fakeReply.text('ok again'));
        await client.sendMessage(
          key,
          `first: ${'a long message about the migration plan and its steps. '.repeat(300)}`,
        );
        await client.sendMessage(key, 'second');
        fake.respondWith((request) =>
          isSummarizerRequest(request)
            ? goodSummarizer(request)
            : isFlushRequest(request)
              ? fakeReply.text('NO_REPLY')
              : undefined,
        );
        const result = await client.compact(key, { keepRecentTokens: 0 });
        fake.respondWith(undefined);
        expect(result.status).toBe('succeeded');
        const status = await client.getStatus(key);
        const split = status.contextSplit!;
        expect(split.historyTokens).toBe(result.tokensAfter);
        expect(status.contextTokens).toBe(
          split.systemTokens + split.bootstrapTokens + split.toolTokens + split.historyTokens,
        );
        expect(status.contextTokens).toBeGreaterThan(result.tokensAfter);
      },
    );
  });

  // The CLI is another process: it reads the workers' database only through a PostgreSQL server.
  (database.name === 'postgres' ? it : it.skip)(
    'keel compact refuses a compaction that would make the context larger: skipped, exit 1, nothing written',
    async () => {
      await suite.withWorker(
        db.store,
        { config: { workspaceDir: workspace } },
        async ({ client, fake, store, taskQueue }) => {
          const key = `agent:${freshDurableAgent()}:main`;
          const agentOf = (k: string) => k.split(':')[1]!;
          fake.enqueue(fakeReply.text('ok'));
          await client.sendMessage(key, 'hi');
          // A summarizer that writes far more than the two short messages it summarizes.
          fake.respondWith((request) =>
            isSummarizerRequest(request)
              ? fakeReply.text(`Summary. ${'The user greeted the assistant at length. '.repeat(60)}`)
              : isFlushRequest(request)
                ? fakeReply.text('NO_REPLY')
                : undefined,
          );
          const env = {
            ...suite.env.processEnv,
            KEEL_TASK_QUEUE: taskQueue,
            DATABASE_URL: store.target.kind === 'postgres' ? store.target.url : undefined,
            KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-compact-')),
          };
          // The messages and compactions of the transcript (the memory flush before a compaction adds its own note).
          const transcript = () =>
            store.db
              .selectFrom('transcript_entries')
              .select(['id', 'type'])
              .where('agent_id', '=', agentOf(key))
              .where('type', 'in', ['message', 'compaction'])
              .execute();
          const entriesBefore = await transcript();
          const summarizerCalls = fake.requests.filter(isSummarizerRequest).length;
          const run = await keel(['compact', key], env);
          fake.respondWith(undefined);
          // The summarizer was asked, and its summary outweighed the conversation: not a success.
          expect(fake.requests.filter(isSummarizerRequest).length).toBeGreaterThan(summarizerCalls);
          expect(run.code).toBe(1);
          const said =
            /compaction skipped, nothing to gain: with its summary the context would take (\d+) tokens, not fewer than the (\d+) it takes now; nothing was written/.exec(
              run.stderr,
            );
          expect(said).not.toBeNull();
          expect(Number(said![1])).toBeGreaterThan(Number(said![2]));
          expect(run.stderr).not.toMatch(/succeeded/);
          const rows = await store.db
            .selectFrom('compactions')
            .select(['status', 'trigger', 'entry_id', 'tokens_before', 'tokens_after'])
            .where('agent_id', '=', agentOf(key))
            .execute();
          expect(rows).toEqual([
            {
              status: 'skipped',
              trigger: 'manual',
              entry_id: null,
              tokens_before: Number(said![2]),
              tokens_after: Number(said![2]),
            },
          ]);
          // The transcript is as it was: no compaction entry, no counter moved.
          expect(await transcript()).toEqual(entriesBefore);
          expect(await getSession(store.db, agentOf(key), key)).toMatchObject({ compaction_count: 0 });
        },
      );
    },
  );
});
