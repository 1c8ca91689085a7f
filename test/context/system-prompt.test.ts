import { buildSystemPrompt, DEFAULT_IDENTITY_LINE } from '../../src/context/system-prompt';

const parts = {
  tools: [{ name: 'read', description: 'Read a file' }, { name: 'exec' }],
  safety: 'Do no harm.',
  skills: 'skills list',
  workspace: 'cwd: /srv/app',
  bootstrap: '## AGENTS.md\n\nrules',
  runtime: 'model: claude',
  afterCompaction: 'Checkpoint saved before the compaction:',
  addition: 'Engine note.',
};

describe('buildSystemPrompt', () => {
  it('is only the identity line in mode none', () => {
    expect(buildSystemPrompt('none', parts)).toBe(DEFAULT_IDENTITY_LINE);
    expect(buildSystemPrompt('none', { identity: 'You are Ada.' })).toBe('You are Ada.');
  });

  it('has tooling, workspace (with bootstrap files) and runtime only in mode minimal', () => {
    const prompt = buildSystemPrompt('minimal', parts);
    expect(prompt).toContain('## Tooling\n- read: Read a file\n- exec');
    expect(prompt).toContain('## Workspace\ncwd: /srv/app\n\n## AGENTS.md\n\nrules');
    expect(prompt).toContain('## Runtime\nmodel: claude');
    expect(prompt).toContain('## After Compaction\nCheckpoint saved before the compaction:');
    expect(prompt).not.toContain('Safety');
    expect(prompt).not.toContain('skills list');
  });

  it('has every given section in a fixed order in mode full', () => {
    const prompt = buildSystemPrompt('full', parts);
    const order = [
      '## Tooling',
      '## Safety',
      '## Skills',
      '## Workspace',
      '## After Compaction',
      '## Runtime',
      'Engine note.',
    ].map((s) => prompt.indexOf(s));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(prompt.startsWith(DEFAULT_IDENTITY_LINE)).toBe(true);
  });

  it('leaves out blank sections', () => {
    expect(buildSystemPrompt('full', { safety: '  ' })).toBe(DEFAULT_IDENTITY_LINE);
  });
});
