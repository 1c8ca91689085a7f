import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel } from '../support/keel-cli';
import { openStore } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';

describe('keel agents and keel session model', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-agents-cli-'));
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));
  const clean = {
    ANTHROPIC_API_KEY: undefined,
    ANTHROPIC_BASE_URL: undefined,
    DATABASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
    KEEL_MODEL: undefined,
    KEEL_CONTEXT_WINDOW: undefined,
  };

  it('agents --json lists each configured agent and what it resolves to, then the defaults; no key appears', async () => {
    const file = join(home, 'keel.config.json');
    await writeFile(
      file,
      JSON.stringify({
        model: 'claude-sonnet-4-6',
        models: { providers: { 'openai-compatible': { models: [{ id: 'qwen3', contextWindow: 32_000 }] } } },
        agents: {
          support: {
            identity: 'You are Support.',
            promptMode: 'minimal',
            workspace: 'support',
            workspaceAccess: 'ro',
            tools: 'support-tools.js',
            contextTokens: 100_000,
            contextEngine: 'budgeted',
            contextEngineOptions: { keepLastAssistants: 5 },
          },
          local: {
            model: {
              provider: 'openai-compatible',
              id: 'qwen3',
              baseUrl: 'http://localhost:11434/v1',
              apiKeyEnv: 'LOCAL_KEY',
            },
            compactionModel: { provider: 'anthropic', id: 'claude-haiku-4-5' },
            workStyle: 'bursty',
          },
          // Ollama's long-time default window: no model summary fits it.
          tiny: { contextTokens: 2_048 },
        },
      }),
    );
    const run = await keel(['agents', '--json'], {
      ...clean,
      KEEL_HOME: home,
      KEEL_CONFIG: file,
      LOCAL_KEY: 'very-secret',
      KEEL_RESERVE_TOKENS: '30000',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('very-secret');
    const report = JSON.parse(run.stdout);
    expect(report.file).toBe(file);
    expect(report.agents.map((a: { agentId: string; configured: boolean }) => [a.agentId, a.configured])).toEqual([
      ['support', true],
      ['local', true],
      ['tiny', true],
      ['*', false],
    ]);
    expect(report.smallWindows).toEqual({ tiny: { window: 2_048, summaryNeeds: expect.any(Number) } });
    expect(report.smallWindows.tiny.summaryNeeds).toBeGreaterThan(2_048);
    const [support, local, , defaults] = report.agents;
    expect(support).toMatchObject({
      model: 'claude-sonnet-4-6',
      provider: 'anthropic',
      contextWindow: { tokens: 100_000, source: 'agentContextTokens' },
      reserveTokens: 30_000,
      workspace: join(home, 'support'),
      workspaceAccess: 'ro',
      toolsModule: join(home, 'support-tools.js'),
      contextEngine: 'budgeted',
      contextEngineOptions: { keepLastAssistants: 5 },
      promptMode: 'minimal',
      identity: 'You are Support.',
    });
    expect(local).toMatchObject({
      model: 'qwen3',
      provider: 'openai-compatible',
      endpoint: 'http://localhost:11434/v1',
      compactionModel: { model: 'claude-haiku-4-5', provider: 'anthropic' },
      contextWindow: { tokens: 32_000, source: 'config' },
      workspaceAccess: 'rw',
      // The work style's preset: the reserve (capped at half the window when it acts), pruning options, the budgeted engine.
      workStyle: 'bursty',
      reserveTokens: 50_000,
      contextEngine: 'budgeted',
      contextEngineOptions: { pruningTtl: 120_000, keepLastAssistants: 1, minPrunableToolChars: 10_000 },
    });
    expect(defaults).toMatchObject({
      model: 'claude-sonnet-4-6',
      contextWindow: { tokens: 200_000, source: 'default' },
      contextEngine: 'legacy',
      promptMode: 'full',
    });

    const people = await keel(['agents'], { ...clean, KEEL_HOME: home, KEEL_CONFIG: file, LOCAL_KEY: 'very-secret' });
    expect(people.stdout).toBe('');
    expect(people.stderr).toContain('model qwen3 (openai-compatible at http://localhost:11434/v1)');
    expect(people.stderr).toContain('window 100000 tokens (agentContextTokens)');
    expect(people.stderr).toContain('engine budgeted (bursty)');
    expect(people.stderr).toContain(
      `window 2,048 tokens is too small for a model summary: every compaction will be extractive (a summary needs a window of ${report.smallWindows.tiny.summaryNeeds.toLocaleString('en-US')} tokens`,
    );
  }, 300_000);

  it("session model shows, sets and clears a session's model; an unknown session is refused and not created", async () => {
    const store = await openStore({ kind: 'pglite', dataDir: join(home, 'db') });
    await ensureSession(store.db, {
      agentId: 'ops',
      sessionKey: 'agent:ops:main',
      newSessionId: 's-1',
      now: new Date(),
    });
    await store.close();
    const env = { ...clean, KEEL_HOME: home, KEEL_CONFIG: undefined };

    const set = await keel(['session', 'model', 'agent:ops:main', 'claude-opus-4-1', '--json'], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      agentId: 'ops',
      sessionKey: 'agent:ops:main',
      model: 'claude-opus-4-1',
      override: 'claude-opus-4-1',
    });
    const cleared = await keel(['session', 'model', 'agent:ops:main', '--clear'], env);
    expect(cleared.stderr).toContain("agent:ops:main: claude-sonnet-4-6 (agent ops's model)");

    const unknown = await keel(['session', 'model', 'agent:ops:typo', 'claude-opus-4-1'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no session agent:ops:typo for agent ops; send it a message first');

    const reopened = await openStore({ kind: 'pglite', dataDir: join(home, 'db') });
    try {
      expect((await getSession(reopened.db, 'ops', 'agent:ops:main'))!.model_override).toBeNull();
      expect(await getSession(reopened.db, 'ops', 'agent:ops:typo')).toBeUndefined();
    } finally {
      await reopened.close();
    }
  }, 300_000);
});
