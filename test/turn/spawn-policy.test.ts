/**
 * Spawn policy by context pressure on the real path: the full system prompt's Messaging section
 * states the policy and the instruction of the level the context reached, the prompt stays
 * byte-identical while the level holds, status and `keel status` show the advice, and the
 * workspace's `.context-policy.yml` overrides the defaults (a bad file never fails a turn).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeAnthropic, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { keel } from '../support/keel-cli';
import { ToolRegistry } from '../../src/tools/registry';
import { getSession } from '../../src/store/sessions-repo';
import type { KeelClient } from '../../src/client/keel-client';

const suite = integrationSuite();

const systemOf = (request: FakeRequest): string => {
  const system = request.body.system as string | Array<{ type: string; text: string }>;
  return typeof system === 'string' ? system : system.map((b) => b.text).join('');
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stands in for the built-in spawn tool: the policy is only stated to an agent that can spawn. */
const spawnTool = () =>
  new ToolRegistry().register({
    name: 'sessions_spawn',
    description: 'Starts a subagent on a task',
    input: z.object({ task: z.string() }),
    run: async () => 'spawned',
  });

const WINDOW = 60_000;
/** The estimator counts " word" as one token plus its 20% margin. */
const wordsFor = (tokens: number) => ' word'.repeat(Math.max(1, Math.ceil(tokens / 1.2)));

/** Sends one message and returns the system prompt its model call carried. */
async function turn(client: KeelClient, fake: FakeAnthropic, key: string, text: string): Promise<string> {
  fake.enqueue(fakeReply.text('ok'));
  const at = fake.requests.length;
  await client.sendMessage(key, text);
  return systemOf(fake.requests[at]!);
}

describe.each(testDatabases())('spawn policy on $name', (database) => {
  const db = suite.storePerTest(database);
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'keel-policy-'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('the prompt and status follow the context from normal to elevated; the prompt holds still while the level does', async () => {
    await suite.withWorker(
      db.store,
      { tools: spawnTool(), config: { workspaceDir: workspace, contextWindowTokens: WINDOW } },
      async ({ client, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const first = await turn(client, fake, key, 'hello');
        expect(first).toContain('## Messaging\n');
        expect(first).toContain(
          'Always spawn: Test suites (more than 3 tests); Multi-file audits (more than 5 files);',
        );
        expect(first).toContain('Never spawn: Single commands;');
        expect(first).toContain('from 50% spawn work needing more than 3 tool calls; from 70% more than 1 tool call');
        expect(first).toContain('Now: Context use is normal');
        expect((await client.getStatus(key)).spawnAdvice.level).toBe('normal');

        // Fill the context to ~55%: past the 50% threshold, below where the flush and compaction start.
        const before = (await client.getStatus(key)).contextTokens;
        await turn(client, fake, key, `Please keep this log:${wordsFor(0.55 * WINDOW - before)}`);
        const status = await client.getStatus(key);
        expect(status.percentUsed).toBeGreaterThanOrEqual(50);
        expect(status.spawnAdvice).toEqual({
          level: 'elevated',
          instruction: expect.stringContaining('hand remaining tool-heavy work (more than 3 tool calls) to subagents'),
        });
        const cli = await keel(['status', key], {
          ...suite.env.processEnv,
          DATABASE_URL: undefined,
        });
        expect(cli.stderr).toContain(
          'spawn policy: elevated · Context is filling up: hand remaining tool-heavy work (more than 3 tool calls) to subagents.',
        );

        // The prompt reads the level the session row recorded at the end of the last turn.
        expect(Number((await getSession(db.store.db, agent, key))!.context_tokens)).toBe(status.contextTokens);
        const third = await turn(client, fake, key, 'thanks');
        expect(third).toContain(
          'Now: Context is filling up: hand remaining tool-heavy work (more than 3 tool calls) to subagents.',
        );
        expect(third).not.toContain('Now: Context use is normal');
        expect(third).not.toContain(`${status.percentUsed}%`);
        // Same level, same prompt: the provider's prompt cache keeps hitting.
        expect(await turn(client, fake, key, 'and again')).toBe(third);

        // A subagent's session gets the minimal prompt: no Messaging section, no policy.
        const sub = await turn(client, fake, `agent:${agent}:subagent:${randomUUID()}`, 'run the task');
        expect(sub).not.toContain('## Messaging');
        expect(sub).not.toContain('Always spawn');
      },
    );
  });

  it('no policy for an agent that cannot spawn (subagentMaxDepth 0 removes the subagent tools)', async () => {
    await suite.withWorker(
      db.store,
      { config: { workspaceDir: workspace, subagentMaxDepth: 0 } },
      async ({ client, fake }) => {
        const system = await turn(client, fake, `agent:${freshDurableAgent()}:main`, 'hello');
        expect(system).toContain('## Messaging\n');
        expect(system).not.toContain('Always spawn');
        expect(system).not.toContain('Now: Context');
        expect(system).not.toContain('sessions_spawn');
      },
    );
  });

  it('.context-policy.yml sets the thresholds, tool-call counts and categories; a bad file falls back to the defaults without failing the turn', async () => {
    await writeFile(
      join(workspace, '.context-policy.yml'),
      [
        'thresholds:',
        '  elevated: 10',
        '  high: 20',
        '  critical: 30',
        'toolCalls:',
        '  elevated: 6',
        'alwaysSpawn:',
        '  - Database migrations',
        'neverSpawn: []',
        '',
      ].join('\n'),
    );
    const config = {
      workspaceDir: workspace,
      contextWindowTokens: WINDOW,
      workspaceWatch: true,
      workspacePollSeconds: 0.05,
    };
    await suite.withWorker(db.store, { tools: spawnTool(), config }, async ({ client, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const tenPercent = wordsFor(0.1 * WINDOW);
      const prompts = [
        await turn(client, fake, key, `one${tenPercent}`),
        await turn(client, fake, key, `two${tenPercent}`),
        await turn(client, fake, key, `three${tenPercent}`),
        await turn(client, fake, key, 'four'),
      ];
      expect(prompts[0]).toContain('Always spawn: Database migrations.');
      expect(prompts[0]).toContain('Never spawn: nothing listed.');
      expect(prompts[0]).toContain(
        'from 10% spawn work needing more than 6 tool calls; from 20% more than 1 tool call (and warn the user); from 30% checkpoint',
      );
      expect(prompts.map((p) => /Now: (.*)/.exec(p)![1])).toEqual([
        'Context use is normal: spawn only the always-spawn tasks and keep other work here.',
        'Context is filling up: hand remaining tool-heavy work (more than 6 tool calls) to subagents.',
        'Context is running high: hand any tool work (more than 1 tool call) to subagents, and warn the user that context is running high.',
        expect.stringMatching(
          /^Context is critical: write a checkpoint .* suggest the user run \/compact or start over with \/new\.$/,
        ),
      ]);
      // Status applies the default thresholds: ~30% is normal there.
      const status = await client.getStatus(key);
      expect(status.percentUsed).toBeLessThan(50);
      expect(status.spawnAdvice.level).toBe('normal');

      // A broken edit: the next turn runs with the default policy (the cache notices the change).
      await writeFile(join(workspace, '.context-policy.yml'), 'thresholds:\n  elevated: half\n');
      await sleep(100);
      const fallback = await turn(client, fake, key, 'five');
      expect(fallback).toContain('Always spawn: Test suites (more than 3 tests);');
      expect(fallback).toContain('from 50% spawn work needing more than 3 tool calls');
      expect(fallback).toContain('Now: Context use is normal');
    });
  });
});
