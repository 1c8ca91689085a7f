import { BOOTSTRAP_FILE_NAMES, buildBootstrapContext } from '../../src/context/bootstrap';

describe('buildBootstrapContext', () => {
  it('orders workspace files as the spec lists them, then other files in the given order', () => {
    const files = ['MEMORY.md', 'notes.md', 'AGENTS.md', 'USER.md', 'SOUL.md'].map((name) => ({
      name,
      content: `# ${name}`,
    }));
    expect(buildBootstrapContext(files).files.map((f) => f.name)).toEqual([
      'AGENTS.md',
      'SOUL.md',
      'USER.md',
      'MEMORY.md',
      'notes.md',
    ]);
    expect(BOOTSTRAP_FILE_NAMES).toEqual([
      'AGENTS.md',
      'SOUL.md',
      'TOOLS.md',
      'IDENTITY.md',
      'USER.md',
      'HEARTBEAT.md',
      'BOOTSTRAP.md',
      'MEMORY.md',
    ]);
  });

  it('caps each file at 5,000 characters by default and notes the truncation', () => {
    const ctx = buildBootstrapContext([{ name: 'AGENTS.md', content: 'a'.repeat(12_000) }]);
    const [file] = ctx.files;
    expect(file).toMatchObject({ truncated: true, keptChars: 5_000, originalChars: 12_000 });
    expect(file.content.startsWith('a'.repeat(5_000) + '\n\n')).toBe(true);
    expect(file.content).toMatch(/AGENTS\.md truncated: showing the first 5000 of 12000 characters/);
  });

  it('caps all files together at 20,000 characters and leaves out files past the budget', () => {
    const files = BOOTSTRAP_FILE_NAMES.map((name) => ({ name, content: 'x'.repeat(4_500) }));
    const ctx = buildBootstrapContext(files);
    expect(ctx.files.reduce((n, f) => n + f.keptChars, 0)).toBe(20_000);
    expect(ctx.files.map((f) => f.truncated)).toEqual([false, false, false, false, true]);
    expect(ctx.omitted).toEqual(['HEARTBEAT.md', 'BOOTSTRAP.md', 'MEMORY.md']);
    expect(ctx.text).toContain('[Not loaded, context file budget used up: HEARTBEAT.md, BOOTSTRAP.md, MEMORY.md]');
  });

  it('honours custom caps and skips empty files', () => {
    const ctx = buildBootstrapContext(
      [
        { name: 'SOUL.md', content: 'be kind' },
        { name: 'TOOLS.md', content: '   ' },
        { name: 'USER.md', content: '0123456789' },
      ],
      { maxCharsPerFile: 4, maxCharsTotal: 100 },
    );
    expect(ctx.files.map((f) => [f.name, f.keptChars])).toEqual([
      ['SOUL.md', 4],
      ['USER.md', 4],
    ]);
    expect(ctx.text.startsWith('## SOUL.md\n\nbe k\n\n[SOUL.md truncated')).toBe(true);
  });

  it('returns empty text when there are no files', () => {
    expect(buildBootstrapContext([]).text).toBe('');
  });
});
