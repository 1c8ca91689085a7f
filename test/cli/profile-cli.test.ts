import { execSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keel } from '../support/keel-cli';
import { openStore, type StoreTarget } from '../../src/store/connect';
import { freshSchemaUrl } from '../support/databases';
import { appendEntries } from '../../src/store/entries-repo';
import { ensureSession } from '../support/ensure-session';
import { agentConfig, loadKeelSettings } from '../../src/config/agent-config';
import type { AgentMessage, TranscriptEntry } from '../../src/context/types';
import { adviseSettings, currentSettings } from '../../src/profile/config-advice';

// Each case starts `keel` (ts-node) processes: under load one needs more than jest's default.
jest.setTimeout(300_000);

const KEY = 'agent:ops:main';

/** A tool-heavy transcript: every turn reads three large files. */
function toolHeavyEntries(): Array<{ entry: TranscriptEntry; tokenEstimate: number }> {
  const out: Array<{ entry: TranscriptEntry; tokenEstimate: number }> = [];
  let at = Date.UTC(2026, 10, 20, 9, 0);
  let parent: string | null = null;
  const add = (id: string, message: AgentMessage, tokens: number) => {
    at += 20_000;
    out.push({
      entry: {
        type: 'message',
        id,
        parentId: parent,
        timestamp: new Date(at).toISOString(),
        message: { ...message, timestamp: at } as AgentMessage,
      },
      tokenEstimate: tokens,
    });
    parent = id;
  };
  for (let t = 0; t < 8; t++) {
    add(`u${t}`, { role: 'user', content: `run the checks of module ${t}` }, 20);
    add(
      `a${t}`,
      {
        role: 'assistant',
        content: [0, 1, 2].map((c) => ({
          type: 'toolCall' as const,
          id: `c${t}-${c}`,
          name: 'read',
          arguments: { path: `m${t}/${c}.ts` },
        })),
        stopReason: 'toolUse',
      },
      90,
    );
    for (const c of [0, 1, 2])
      add(
        `r${t}-${c}`,
        {
          role: 'toolResult',
          toolCallId: `c${t}-${c}`,
          toolName: 'read',
          content: [{ type: 'text', text: 'x'.repeat(8_000) }],
        },
        2_000,
      );
    add(
      `f${t}`,
      { role: 'assistant', content: [{ type: 'text', text: `module ${t} passes` }], stopReason: 'stop' },
      30,
    );
  }
  return out;
}

const variants: Array<{ name: string; databaseUrl: () => Promise<string | undefined> }> = [
  { name: 'PGlite', databaseUrl: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', databaseUrl: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

describe.each(variants)('keel profile on $name', (variant) => {
  let home: string;
  let file: string;
  let env: Record<string, string | undefined>;
  const original = {
    model: 'claude-sonnet-4-6',
    agents: { ops: { identity: 'You are Ops.' }, other: { reserveTokens: 25_000 } },
  };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-profile-'));
    file = join(home, 'keel.config.json');
    await writeFile(file, `${JSON.stringify(original, null, 2)}\n`);
    const databaseUrl = await variant.databaseUrl();
    const target: StoreTarget = databaseUrl
      ? { kind: 'postgres', url: databaseUrl }
      : { kind: 'pglite', dataDir: resolve(home, 'db') };
    env = {
      KEEL_HOME: home,
      KEEL_CONFIG: file,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: undefined,
      KEEL_RESERVE_TOKENS: undefined,
      KEEL_CONTEXT_ENGINE: undefined,
      KEEL_CONTEXT_WINDOW: undefined,
    };
    const store = await openStore(target);
    try {
      await ensureSession(store.db, { agentId: 'ops', sessionKey: KEY, newSessionId: 's1', now: new Date() });
      await appendEntries(store.db, 'ops', 's1', toolHeavyEntries());
    } finally {
      await store.close();
    }
  });

  it('classifies the session with its evidence and lists what is right, then what differs', async () => {
    const run = await keel(['profile', KEY, '--json'], env);
    expect(run.code).toBe(0);
    const { profile } = JSON.parse(run.stdout);
    expect(profile.classification).toMatchObject({
      style: 'tool-heavy',
      evidence: { turns: 8, toolCalls: 24, toolCallsPerTurn: { mean: 3, max: 3 } },
    });
    expect(profile.classification.evidence.toolShare).toBeGreaterThan(0.9);
    expect(profile.estimate.parts.find((p: { part: string }) => p.part === 'tool results')).toEqual({
      part: 'tool results',
      count: 24,
      low: 12_000,
      high: 120_000,
      measured: 48_000,
    });
    expect(profile.advice.changes.map((a: { key: string }) => a.key)).toEqual([
      'contextEngine',
      'reserveTokens',
      'pruningTtl',
      'keepLastAssistants',
      'minPrunableToolChars',
    ]);
  });

  it('--apply shows the profile and the exact changes, refuses without confirmation when stdin is not a terminal, and writes nothing', async () => {
    const run = await keel(['profile', KEY, '--apply'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Pattern: tool-heavy');
    expect(run.stderr).toContain('  • When to compress the conversation: reserveTokens 20000 → 60000');
    expect(run.stderr).toContain(`File: ${file}`);
    expect(run.stderr).toContain('agents.ops.reserveTokens: unset (now 20000) → 60000');
    expect(run.stderr).toContain(
      'stdin is not a terminal, so nobody can confirm: nothing was written; run again with --yes',
    );
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(original);
    expect(await readdir(home)).not.toEqual(expect.arrayContaining([expect.stringMatching(/\.bak$|\.rollback\.md$/)]));
  });

  it('--apply --yes backs the file up, writes a rollback note, and the new file loads with the agent on the recommended settings', async () => {
    const run = await keel(['profile', KEY, '--apply', '--yes', '--json'], env);
    expect(run.code).toBe(0);
    const { apply } = JSON.parse(run.stdout);
    expect(apply).toMatchObject({
      file,
      applied: true,
      backup: expect.stringMatching(/keel\.config\.json\.\d{4}-\d\d-\d\dT[\d-]+Z\.bak$/),
    });
    expect(apply.changes.map((c: { path: string; new: unknown }) => [c.path, c.new])).toEqual([
      ['agents.ops.contextEngine', 'budgeted'],
      ['agents.ops.reserveTokens', 60_000],
      ['agents.ops.contextEngineOptions.pruningTtl', '1m'],
      ['agents.ops.contextEngineOptions.keepLastAssistants', 1],
      ['agents.ops.contextEngineOptions.minPrunableToolChars', 10_000],
    ]);
    expect(JSON.parse(await readFile(apply.backup, 'utf8'))).toEqual(original);
    const note = await readFile(apply.rollbackNote, 'utf8');
    expect(note).toContain(`cp '${apply.backup}' '${file}'`);
    expect(note).toContain('- agents.ops.contextEngineOptions.pruningTtl: unset (now "off") → "1m"');

    // Keel's own loader reads the new file: ops runs tool-heavy, the other agents keep theirs.
    const settings = loadKeelSettings({ env: { KEEL_CONFIG: file }, cwd: home });
    const ops = agentConfig(settings, 'ops');
    expect([ops.identity, ops.contextEngine, ops.reserveTokens, ops.contextEngineOptions]).toEqual([
      'You are Ops.',
      'budgeted',
      60_000,
      { pruningTtl: 60_000, keepLastAssistants: 1, minPrunableToolChars: 10_000 },
    ]);
    expect(agentConfig(settings, 'other').reserveTokens).toBe(25_000);

    // Profiled again, nothing differs; the rollback note's command undoes the change.
    expect(adviseSettings(currentSettings(ops), 'tool-heavy', 200_000).changes).toEqual([]);
    execSync(
      note
        .split('\n')
        .find((l) => l.trim().startsWith('cp '))!
        .trim(),
    );
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(original);
  });
});
