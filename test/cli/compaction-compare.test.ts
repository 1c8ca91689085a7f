import { identifierCoverage } from '../../src/compaction/summary-coverage';
import { renderComparison, wrapLines } from '../../src/cli/compaction-compare';

describe('identifierCoverage', () => {
  it('counts what each summary kept verbatim and names the identifiers only one of them kept', () => {
    const ids = ['OPS-1101', '/srv/app/a.ts', '9f3c2ab71d', 'OPS-1101'];
    const c = identifierCoverage(ids, 'kept OPS-1101 and /srv/app/a.ts', 'kept OPS-1101 and 9f3c2ab71d');
    expect(c.identifiers).toEqual(['OPS-1101', '/srv/app/a.ts', '9f3c2ab71d']);
    expect(c.a).toEqual({ kept: ['OPS-1101', '/srv/app/a.ts'], missing: ['9f3c2ab71d'] });
    expect(c.b).toEqual({ kept: ['OPS-1101', '9f3c2ab71d'], missing: ['/srv/app/a.ts'] });
    expect(c.onlyA).toEqual(['/srv/app/a.ts']);
    expect(c.onlyB).toEqual(['9f3c2ab71d']);
  });
});

describe('renderComparison', () => {
  const a = {
    id: 'c-1',
    label: 'manual, model m1',
    summary: '## Decisions\n- keep OPS-1101 open\n' + 'a long line of summary text '.repeat(6),
  };
  const b = { id: 'c-2', label: 'rerun, rerun of c-1 (applied)', summary: '## Decisions\n- ship on Friday' };
  const coverage = identifierCoverage(['OPS-1101', 'Friday-x'], a.summary, b.summary);

  it('puts the summaries side by side on a wide terminal, no line wider than it', () => {
    const text = renderComparison(a, b, coverage, 100);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^c-1 \(manual, model m1\)\s+│ c-2 \(rerun, rerun of c-1 \(applied\)\)$/);
    expect(lines.find((l) => l.includes('keep OPS-1101 open'))).toContain(' │ - ship on Friday');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(100);
    expect(text).toContain('c-1: kept 1/2');
    expect(text).toContain('c-2: kept 0/2');
    expect(text).toContain('only c-1 kept: OPS-1101');
    expect(text).toContain('only c-2 kept: none');
  });

  it('stacks them on a narrow terminal', () => {
    const text = renderComparison(a, b, coverage, 50);
    expect(text).not.toContain(' │ ');
    const lines = text.split('\n');
    expect(lines.indexOf('── c-2 (rerun, rerun of c-1 (applied)) ──')).toBeGreaterThan(
      lines.findIndex((l) => l.includes('keep OPS-1101')),
    );
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(50);
  });

  it('wraps at spaces and cuts words longer than a column', () => {
    expect(wrapLines('alpha beta gamma', 11)).toEqual(['alpha beta', 'gamma']);
    expect(wrapLines('x'.repeat(12), 5)).toEqual(['xxxxx', 'xxxxx', 'xx']);
    expect(wrapLines('a\n\nb', 5)).toEqual(['a', '', 'b']);
  });
});
