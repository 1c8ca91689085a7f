import { z } from 'zod';
import { retryDelayMs, runsAgain, toolRunPolicy } from '../../src/tools/tool-run-policy';
import { RetryableToolError } from '../../src/tools/tool-errors';
import { ToolRegistry } from '../../src/tools/registry';
import { DEFAULTS } from '../../src/config/defaults';

const config = { toolTimeoutMs: 60_000 };

describe('toolRunPolicy', () => {
  it.each([
    ['the agent timeout when the tool names none', {}, config, 60_000],
    ["the tool's own timeout over the agent's", { timeoutMs: 5_000 }, config, 5_000],
    [
      "the agent's timeout for this tool over the tool's own",
      { timeoutMs: 5_000 },
      { ...config, toolTimeouts: { deploy: 900 } },
      900,
    ],
    ["another tool's entry changes nothing", { timeoutMs: 5_000 }, { ...config, toolTimeouts: { other: 900 } }, 5_000],
  ])('takes %s', (_case, tool, agent, timeoutMs) => {
    expect(toolRunPolicy({ name: 'deploy', ...tool }, agent).timeoutMs).toBe(timeoutMs);
  });

  it('retries only RetryableToolError under the default policy when the tool has none', () => {
    const policy = toolRunPolicy({ name: 'deploy' }, config);
    expect(policy.retry).toEqual(DEFAULTS.toolRetry);
    expect(runsAgain(policy, new Error('no such account'), 1)).toBe(false);
    expect(runsAgain(policy, new RetryableToolError('busy'), 1)).toBe(true);
    expect(runsAgain(policy, new RetryableToolError('busy'), DEFAULTS.toolRetry.maxAttempts)).toBe(false);
  });

  it('recognises a RetryableToolError from another copy of the package by its name', () => {
    const foreign = Object.assign(new Error('busy'), { name: 'RetryableToolError' });
    expect(runsAgain(toolRunPolicy({ name: 'deploy' }, config), foreign, 1)).toBe(true);
  });

  it('retries every error of a tool with a policy of its own, up to its attempts', () => {
    const policy = toolRunPolicy({ name: 'deploy', retry: { maxAttempts: 2, initialIntervalMs: 10 } }, config);
    expect(runsAgain(policy, new Error('flaky'), 1)).toBe(true);
    expect(runsAgain(policy, new Error('flaky'), 2)).toBe(false);
    expect(policy.retry.maxIntervalMs).toBe(DEFAULTS.toolRetry.maxIntervalMs);
  });

  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [6, 1_000],
  ])('waits, after %i attempts, %i ms (doubling up to the maximum)', (attempts, delay) => {
    expect(
      retryDelayMs(
        toolRunPolicy({ name: 't', retry: { maxAttempts: 9, initialIntervalMs: 100, maxIntervalMs: 1_000 } }, config),
        attempts,
      ),
    ).toBe(delay);
  });
});

describe('ToolRegistry.register run limits', () => {
  const tool = { name: 'deploy', description: 'Deploys', input: z.object({}), run: async () => 'ok' };
  it.each([
    [{ timeoutMs: 0 }, 'tool "deploy": timeoutMs is 0; use a whole number from 1 to 86400000'],
    [{ timeoutMs: 1.5 }, 'tool "deploy": timeoutMs is 1.5; use a whole number from 1 to 86400000'],
    [{ timeoutMs: 30 * 86_400_000 }, 'tool "deploy": timeoutMs is 2592000000; use a whole number from 1 to 86400000'],
    [{ retry: { maxAttempts: 0 } }, 'tool "deploy": retry.maxAttempts is 0; use a whole number from 1 to'],
    [{ retry: {} }, 'tool "deploy": retry.maxAttempts is NaN; use a whole number from 1 to'],
    [
      { retry: { maxAttempts: 2, initialIntervalMs: -1 } },
      'tool "deploy": retry.initialIntervalMs is -1; use a whole number from 0 to',
    ],
  ])('refuses %j, naming the field', (limits, message) => {
    expect(() => new ToolRegistry().register({ ...tool, ...(limits as object) })).toThrow(message);
  });
});
