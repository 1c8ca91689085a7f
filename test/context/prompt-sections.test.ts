import {
  dailyLogPaths,
  localDate,
  postCompactionMemory,
  promptModeFor,
  runtimeSection,
} from '../../src/context/prompt-sections';

describe('prompt mode by session kind', () => {
  it('gives main and chat sessions the configured mode, subagent, cron and hook sessions minimal, and none to all when configured', () => {
    expect(promptModeFor('agent:ops:main', 'full')).toBe('full');
    expect(promptModeFor('agent:ops:telegram:dm:42', 'full')).toBe('full');
    expect(promptModeFor('agent:ops:main', 'minimal')).toBe('minimal');
    expect(promptModeFor('agent:ops:subagent:0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f', 'full')).toBe('minimal');
    expect(promptModeFor('cron:nightly', 'full')).toBe('minimal');
    expect(promptModeFor('hook:0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f', 'full')).toBe('minimal');
    expect(promptModeFor('agent:ops:subagent:0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f', 'none')).toBe('none');
  });
});

describe('runtime line and daily logs', () => {
  it('states the date in the user time zone and stays the same all day (prompt caching)', () => {
    const morning = runtimeSection('claude-x', new Date('2026-11-23T00:30:00Z'), 'Europe/Berlin');
    const evening = runtimeSection('claude-x', new Date('2026-11-23T22:59:00Z'), 'Europe/Berlin');
    expect(morning).toBe(evening);
    expect(morning).toBe('Model: claude-x\nDate: 2026-11-23 (Monday), time zone Europe/Berlin');
    // Past local midnight it is the next day.
    expect(runtimeSection('claude-x', new Date('2026-11-23T23:01:00Z'), 'Europe/Berlin')).toContain(
      'Date: 2026-11-24 (Tuesday)',
    );
  });

  it('names yesterday’s and today’s log in the user time zone, across month ends and DST changes', () => {
    expect(dailyLogPaths(new Date('2026-11-23T23:30:00Z'), 'Asia/Tokyo')).toEqual([
      'memory/2026-11-23.md',
      'memory/2026-11-24.md',
    ]);
    expect(dailyLogPaths(new Date('2026-03-01T05:00:00Z'), 'America/New_York')).toEqual([
      'memory/2026-02-28.md',
      'memory/2026-03-01.md',
    ]);
    expect(dailyLogPaths(new Date('2026-03-29T12:00:00Z'), 'Europe/Berlin')).toEqual([
      'memory/2026-03-28.md',
      'memory/2026-03-29.md',
    ]);
    expect(localDate(new Date('2026-01-01T00:00:00Z'), 'America/Los_Angeles')).toBe('2025-12-31');
  });
});

describe('post-compaction memory', () => {
  it('names where the notes went and lists the checkpoint fields that were saved', () => {
    const text = postCompactionMemory({
      notesDay: '2026-11-23',
      notesInWorkspace: true,
      checkpoint: { currentTask: 'Deploy', decisions: ['use blue-green'], nextSteps: ['migrate', 'switch'] },
    });
    expect(text).toBe(
      [
        'The conversation was compacted. Notes you saved before it are in memory/2026-11-23.md and found by memory_search.',
        'Checkpoint saved before the compaction:',
        '- Current task: Deploy',
        '- Decisions: use blue-green',
        '- Next steps: migrate; switch',
      ].join('\n'),
    );
    expect(postCompactionMemory({ notesDay: '2026-11-23', notesInWorkspace: false })).toBe(
      'The conversation was compacted. Notes you saved before it (2026-11-23) are found by memory_search.',
    );
    expect(postCompactionMemory({})).toBe('');
  });
});
