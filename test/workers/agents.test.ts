/**
 * One worker serves every agent of keel.config.json: each agent's turns call its own model (provider,
 * endpoint, model id), list only its own tools, run those tools against its own workspace, and use
 * its own context window; a session's model override reaches the request and the window.
 */
import { realisticMessage } from '../support/durable-turn-helpers';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { keelClient, runInProcessWorker, uniqueTaskQueue } from '../support/temporal';
import { loadKeelSettings } from '../../src/config/agent-config';
import { openRuntime } from '../../src/runtime/activity-deps';
import { getSession, setModelOverride } from '../../src/store/sessions-repo';
import type { MessageEntry, ToolResultMessage } from '../../src/context/types';
import type { Store } from '../../src/store/connect';
import { allEntries } from '../support/store-readers';

const suite = integrationSuite();

/** A tools module registering one tool that reads NOTE.md from the agent's workspace. */
function toolsModule(toolName: string): string {
  return `const { z } = require(${JSON.stringify(require.resolve('zod'))});
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
exports.registerTools = (registry) => registry.register({
  name: ${JSON.stringify(toolName)},
  description: 'Reads the note in the agent workspace',
  input: z.object({}),
  run: async (_input, ctx) => ctx.workspace ? ctx.workspace.access + ': ' + readFileSync(join(ctx.workspace.dir, 'NOTE.md'), 'utf8').trim() : 'no workspace',
});
`;
}

/** Tool names a request offered, Anthropic (`name`) or OpenAI (`function.name`) shape. */
// The subagent and recall tools every agent has are not what these tests compare: the per-agent tools are.
const EVERY_AGENTS_TOOLS = new Set([
  'sessions_spawn',
  'sessions_send',
  'sessions_history',
  'subagents',
  'history_search',
  'history_expand',
]);
const toolNames = (r: FakeRequest) =>
  (r.body.tools ?? []).map((t) => (t.function?.name ?? t.name) as string).filter((n) => !EVERY_AGENTS_TOOLS.has(n));

async function toolResults(store: Store, agentId: string, key: string): Promise<string[]> {
  const session = await getSession(store.db, agentId, key);
  return (await allEntries(store.db, agentId, session!.session_id))
    .map((r) => (r.payload as unknown as MessageEntry).message)
    .filter((m): m is ToolResultMessage => m?.role === 'toolResult')
    .map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
}

describe.each(testDatabases())('agents of one worker on $name', (database) => {
  const db = suite.storePerTest(database);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-agents-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('calls each agent with its model, tools, workspace and window; a session model override reaches the request', async () => {
    const tag = randomBytes(3).toString('hex');
    const support = `support-${tag}`;
    const research = `research-${tag}`;
    for (const [name, note] of [
      ['ws-support', 'support notes'],
      ['ws-research', 'research notes'],
    ] as const) {
      await mkdir(join(dir, name));
      await writeFile(join(dir, name, 'NOTE.md'), `${note}\n`);
    }
    await writeFile(join(dir, 'support-tools.js'), toolsModule('support_note'));
    await writeFile(join(dir, 'research-tools.js'), toolsModule('research_note'));
    const url = suite.fake.url;
    await writeFile(
      join(dir, 'keel.config.json'),
      JSON.stringify({
        model: { provider: 'anthropic', id: 'default-model', baseUrl: url, apiKeyEnv: 'TEST_AGENTS_KEY' },
        reset: { mode: 'none' },
        models: { providers: { anthropic: { models: [{ id: 'claude-override', contextWindow: 150_000 }] } } },
        agents: {
          [support]: {
            model: { provider: 'anthropic', id: 'claude-support', baseUrl: url },
            workspace: 'ws-support',
            tools: 'support-tools.js',
          },
          [research]: {
            model: { provider: 'openai-compatible', id: 'local-research', baseUrl: `${url}/v1` },
            workspace: 'ws-research',
            workspaceAccess: 'ro',
            tools: 'research-tools.js',
            contextTokens: 64_000,
          },
        },
      }),
    );
    const settings = loadKeelSettings({
      env: { KEEL_CONFIG: join(dir, 'keel.config.json'), TEST_AGENTS_KEY: 'sk-test' },
      cwd: dir,
    });
    const runtime = await openRuntime({ config: settings.defaults, agents: settings.agents, store: db.store });
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(suite.env, taskQueue, runtime.deps);
    try {
      const client = keelClient(suite.env, taskQueue);
      const fake = suite.fake;

      // support: Anthropic, its own tool, its own workspace (rw).
      const supportKey = `agent:${support}:main`;
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_s1', name: 'support_note', input: {} }]),
        fakeReply.text('support done'),
      );
      expect((await client.sendMessage(supportKey, 'read your note')).reply).toBe('support done');
      const supportCalls = fake.requests.slice(first);
      expect(supportCalls.map((r) => [r.path, r.body.model])).toEqual([
        ['/v1/messages', 'claude-support'],
        ['/v1/messages', 'claude-support'],
      ]);
      // Each agent's own tools, then the built-in memory_search every agent has.
      expect(supportCalls.map(toolNames)).toEqual([
        ['support_note', 'memory_search'],
        ['support_note', 'memory_search'],
      ]);
      expect(JSON.stringify(supportCalls[1]!.body.messages)).toContain('rw: support notes');
      expect(await toolResults(db.store, support, supportKey)).toEqual(['rw: support notes']);
      expect((await client.getStatus(supportKey)).contextWindow).toBe(200_000);

      // research: OpenAI-compatible, only its own tool; support's tool is unknown to it.
      const researchKey = `agent:${research}:main`;
      const second = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'call_r1', name: 'support_note', input: {} }]),
        fakeReply.toolUse([{ id: 'call_r2', name: 'research_note', input: {} }]),
        fakeReply.text('research done'),
      );
      expect((await client.sendMessage(researchKey, realisticMessage('read your note', 30))).reply).toBe(
        'research done',
      );
      const researchCalls = fake.requests.slice(second);
      expect(researchCalls.map((r) => [r.path, r.body.model])).toEqual([
        ['/v1/chat/completions', 'local-research'],
        ['/v1/chat/completions', 'local-research'],
        ['/v1/chat/completions', 'local-research'],
      ]);
      expect(researchCalls.map(toolNames)).toEqual([
        ['research_note', 'memory_search'],
        ['research_note', 'memory_search'],
        ['research_note', 'memory_search'],
      ]);
      expect(await toolResults(db.store, research, researchKey)).toEqual([
        'unknown tool "support_note"; available tools: research_note, memory_search, history_search, history_expand, sessions_spawn, sessions_send, sessions_history, subagents',
        'ro: research notes',
      ]);
      expect(JSON.stringify(researchCalls[2]!.body.messages)).toContain('ro: research notes');
      // Its window is its contextTokens cap.
      const researchStatus = await client.getStatus(researchKey);
      expect([researchStatus.contextWindow, researchStatus.model]).toEqual([64_000, 'local-research']);

      // Its compaction summarizes with its model too (its read-only workspace skips the memory flush); the
      // server reported cached prompt tokens, so the summary is asked at the end of the last request.
      const beforeCompact = fake.requests.length;
      fake.respondWith(() => fakeReply.text('Research summary: the agent read its note.'));
      const compacted = await client.compact(researchKey);
      fake.respondWith(undefined);
      expect([compacted.status, compacted.degraded]).toEqual(['succeeded', false]);
      const summarizerCalls = fake.requests.slice(beforeCompact);
      expect(summarizerCalls.length).toBeGreaterThan(0);
      for (const r of summarizerCalls) {
        expect([r.path, r.body.model]).toEqual(['/v1/chat/completions', 'local-research']);
        expect(JSON.stringify(r.body.messages)).toContain('<summary-request>');
      }

      // An agent without a section runs with the defaults: the default model, no tools.
      const otherKey = `agent:other-${tag}:main`;
      const third = fake.requests.length;
      fake.enqueue(fakeReply.text('default done'));
      expect((await client.sendMessage(otherKey, 'hello')).reply).toBe('default done');
      // The key comes from the variable apiKeyEnv names (this SDK sends it as a bearer token).
      expect(fake.requests.slice(third).map((r) => [r.body.model, toolNames(r), r.headers.authorization])).toEqual([
        ['default-model', ['memory_search'], 'Bearer sk-test'],
      ]);

      // The session's model override reaches the request, the window (its models.providers entry) and the status.
      expect(await setModelOverride(db.store.db, support, supportKey, 'claude-override')).toBe(true);
      const fourth = fake.requests.length;
      fake.enqueue(fakeReply.text('override done'));
      expect((await client.sendMessage(supportKey, 'again')).reply).toBe('override done');
      expect(fake.requests.slice(fourth).map((r) => [r.body.model, toolNames(r)])).toEqual([
        ['claude-override', ['support_note', 'memory_search']],
      ]);
      const overridden = await client.getStatus(supportKey);
      expect([overridden.model, overridden.contextWindow]).toEqual(['claude-override', 150_000]);
      expect((await getSession(db.store.db, support, supportKey))!.model_override).toBe('claude-override');
    } finally {
      await worker.stop();
      await runtime.close();
    }
  });
});
