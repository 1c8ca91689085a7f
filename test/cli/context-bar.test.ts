import { contextBar } from '../../src/cli/context-bar';

describe('contextBar', () => {
  const at = (percentUsed: number, pressure: '70' | '85' | 'normal' = 'normal') =>
    contextBar({ contextTokens: percentUsed * 2_000, contextWindow: 200_000, percentUsed, pressure });

  it('warns the user from 65% of the window on, naming what to do', () => {
    expect(at(64.9)).not.toContain('warning');
    expect(at(65)).toContain('warning: over 65% of the window used; /compact (keel compact) or /new soon');
    expect(at(90, '85')).toMatch(/above 85% · warning/);
  });
});
