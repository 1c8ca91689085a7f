/** The spawn-policy levels at their boundaries and what `.context-policy.yml` may say. */
import { DEFAULT_SPAWN_POLICY, spawnAdvice, spawnLevel } from '../../src/context/spawn-policy';
import { parseContextPolicy } from '../../src/context/context-policy-file';

describe('spawn levels', () => {
  it.each([
    [0, 'normal'],
    [49.9, 'normal'],
    [50, 'elevated'],
    [69.9, 'elevated'],
    [70, 'high'],
    [84.9, 'high'],
    [85, 'critical'],
    [120, 'critical'],
  ] as const)('%s%% is %s', (percent, level) => {
    expect(spawnLevel(percent)).toBe(level);
    expect(spawnAdvice(percent).level).toBe(level);
  });

  it('the high level warns the user; critical checkpoints and suggests /compact or /new', () => {
    expect(spawnAdvice(75).instruction).toContain('warn the user');
    expect(spawnAdvice(90).instruction).toMatch(/checkpoint.*\/compact.*\/new/);
  });
});

describe('.context-policy.yml', () => {
  it('a missing or empty file is the default policy', () => {
    expect(parseContextPolicy(undefined)).toEqual({ policy: DEFAULT_SPAWN_POLICY, warnings: [] });
    expect(parseContextPolicy('# nothing yet\n')).toEqual({ policy: DEFAULT_SPAWN_POLICY, warnings: [] });
  });

  it('keys it leaves out keep their defaults', () => {
    const { policy, warnings } = parseContextPolicy('thresholds:\n  high: 60\nneverSpawn: [Chat]\n');
    expect(warnings).toEqual([]);
    expect(policy).toEqual({
      ...DEFAULT_SPAWN_POLICY,
      thresholds: { elevated: 50, high: 60, critical: 85 },
      neverSpawn: ['Chat'],
    });
  });

  it.each([
    ['thresholds: [', /^\.context-policy\.yml is not valid YAML \(.+\); fix the syntax/],
    [
      '- a list',
      /^\.context-policy\.yml: \(top level\): use a map with thresholds, toolCalls, alwaysSpawn and neverSpawn/,
    ],
    [
      'threshold:\n  elevated: 40',
      /^\.context-policy\.yml: \(top level\): unknown key "threshold"; use thresholds, toolCalls, alwaysSpawn, neverSpawn/,
    ],
    ['thresholds:\n  mid: 40', /^\.context-policy\.yml: thresholds: unknown key "mid"; use elevated, high, critical/],
    ['thresholds:\n  elevated: 150', /^\.context-policy\.yml: thresholds\.elevated: use a number from 0 to 100/],
    [
      'thresholds:\n  elevated: 80',
      /^\.context-policy\.yml: thresholds: the levels must rise: elevated < high < critical/,
    ],
    ['toolCalls:\n  high: 1.5', /^\.context-policy\.yml: toolCalls\.high: use a whole number of tool calls/],
    ['alwaysSpawn: Test suites', /^\.context-policy\.yml: alwaysSpawn: use a list of task descriptions/],
    ['neverSpawn: ["  "]', /^\.context-policy\.yml: neverSpawn\.0: an empty task description; remove it/],
  ])('%j falls back to the defaults with a warning naming the field', (text, warning) => {
    const { policy, warnings } = parseContextPolicy(text);
    expect(policy).toBe(DEFAULT_SPAWN_POLICY);
    expect(warnings).toEqual([expect.stringMatching(warning)]);
    expect(warnings[0]).toContain('the default spawn policy applies until it is fixed');
  });
});
