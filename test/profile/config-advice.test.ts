import { adviceLines, adviseSettings, currentSettings } from '../../src/profile/config-advice';
import { changeLine, planConfigChanges } from '../../src/profile/config-changes';
import { WORK_STYLE_PRESETS } from '../../src/context/work-style-presets';

const legacyDefaults = currentSettings({ contextEngine: 'legacy', reserveTokens: 16_384 });

describe('adviseSettings: current vs recommended, right first, only what differs', () => {
  it('reads the reserve after its floor, and defaults for unset engine options', () => {
    expect(legacyDefaults).toEqual({
      contextEngine: 'legacy',
      reserveTokens: 20_000,
      keepLastAssistants: 3,
      minPrunableToolChars: 50_000,
    });
  });

  it('a conversational session on the defaults: protection and trim size already right; engine, reserve and TTL change', () => {
    const advice = adviseSettings(legacyDefaults, 'conversational', 200_000);
    expect(advice.right.map((a) => a.key)).toEqual(['keepLastAssistants', 'minPrunableToolChars']);
    expect(advice.changes.map((a) => [a.key, a.current, a.recommended])).toEqual([
      ['contextEngine', 'legacy', 'budgeted'],
      ['reserveTokens', 20_000, 30_000],
      ['pruningTtl', null, '5m'],
    ]);
    const lines = adviceLines(advice);
    expect(lines[0]).toBe('Already right:');
    expect(lines[1]).toBe(
      '  ✓ How many recent exchanges are protected from cleanup (keepLastAssistants 3): the last 3 exchanges keep their tool output untouched',
    );
    expect(lines).toContain('Recommended for conversational work (planning, discussion):');
    expect(lines).toContain(
      '  • When to compress the conversation: reserveTokens 20000 → 30000: compaction starts at about 85% full instead of 90%: sooner, so a shorter summary and more room left after it',
    );
    expect(lines).toContain(
      '  • How quickly old tool output is cleared: pruningTtl off → 5m: after 5 minutes without a turn, old command output, file reads and search results are replaced by a short note (now they are never cleared for being idle)',
    );
  });

  it('on a small window a reserve that acts the same (half the window at most) is already right', () => {
    const current = currentSettings({
      contextEngine: 'budgeted',
      reserveTokens: 40_000,
      contextEngineOptions: { pruningTtl: 60_000, keepLastAssistants: 1, minPrunableToolChars: 10_000 },
    });
    expect(adviseSettings(current, 'tool-heavy', 32_000).right.map((a) => [a.key, a.inPractice])).toContainEqual([
      'reserveTokens',
      'compaction starts at about 50% of the 32,000-token window',
    ]);
    expect(adviseSettings(current, 'tool-heavy', 200_000).changes.map((a) => a.key)).toEqual(['reserveTokens']);
    // On a 100k window the preset's 60,000 is capped at half the window (a reserve above it would not load).
    expect(
      adviseSettings({ ...current, reserveTokens: 20_000 }, 'tool-heavy', 100_000).changes.map((a) => [
        a.key,
        a.current,
        a.recommended,
      ]),
    ).toEqual([['reserveTokens', 20_000, 50_000]]);
  });

  it('settings that already match the preset give nothing to change', () => {
    const p = WORK_STYLE_PRESETS['tool-heavy'];
    const current = currentSettings({
      contextEngine: 'budgeted',
      reserveTokens: p.reserveTokens,
      contextEngineOptions: { pruningTtl: p.pruningTtl, keepLastAssistants: 1, minPrunableToolChars: 10_000 },
    });
    const advice = adviseSettings(current, 'tool-heavy', 200_000);
    expect(advice.changes).toEqual([]);
    expect(adviceLines(advice).at(-1)).toBe(
      'Nothing to change: the settings match tool-heavy work (audits, tests, debugging).',
    );
  });
});

describe("planConfigChanges: the advice as edits of the agent's section", () => {
  const advice = adviseSettings(legacyDefaults, 'tool-heavy', 200_000);

  it('creates the agent section, copies inherited engine options, and names every path old → new', () => {
    const file = {
      model: 'claude-sonnet-4-6',
      contextEngineOptions: { custom: true, keepLastAssistants: 3 },
      agents: { other: { identity: 'x' } },
    };
    const { json, changes } = planConfigChanges(file, 'ops', advice);
    expect(json).toEqual({
      model: 'claude-sonnet-4-6',
      contextEngineOptions: { custom: true, keepLastAssistants: 3 },
      agents: {
        other: { identity: 'x' },
        ops: {
          contextEngine: 'budgeted',
          reserveTokens: 60_000,
          contextEngineOptions: { custom: true, pruningTtl: '1m', keepLastAssistants: 1, minPrunableToolChars: 10_000 },
        },
      },
    });
    expect(changes.map(changeLine)).toEqual([
      'agents.ops.contextEngine: unset (now "legacy") → "budgeted"',
      'agents.ops.reserveTokens: unset (now 20000) → 60000',
      'agents.ops.contextEngineOptions.pruningTtl: unset (now "off") → "1m"',
      'agents.ops.contextEngineOptions.keepLastAssistants: unset (now 3) → 1',
      'agents.ops.contextEngineOptions.minPrunableToolChars: unset (now 50000) → 10000',
    ]);
    // The input is not modified.
    expect(file.agents).toEqual({ other: { identity: 'x' } });
  });

  it('updates an existing section in place, and its work style with it', () => {
    const { json, changes } = planConfigChanges(
      {
        agents: {
          ops: { workStyle: 'conversational', reserveTokens: 30_000, contextEngineOptions: { keepLastAssistants: 3 } },
        },
      },
      'ops',
      advice,
    );
    expect((json.agents as Record<string, unknown>).ops).toEqual({
      workStyle: 'tool-heavy',
      contextEngine: 'budgeted',
      reserveTokens: 60_000,
      contextEngineOptions: { keepLastAssistants: 1, pruningTtl: '1m', minPrunableToolChars: 10_000 },
    });
    expect(changes.map(changeLine)).toContain('agents.ops.reserveTokens: 30000 → 60000');
    expect(changes.map(changeLine)).toContain('agents.ops.workStyle: "conversational" → "tool-heavy"');
    expect(() => planConfigChanges([], 'ops', advice)).toThrow('not a JSON object');
  });
});
