import { configFromEnv } from '../../src/config/keel-config';
import { mainPromptMode, offersSubagentTools } from '../../src/config/small-window';

describe('small windows run lean', () => {
  it.each([
    ['a 4k window', { KEEL_CONTEXT_WINDOW: '4000' }, 'minimal', false],
    ['a 16k window, at the limit', { KEEL_CONTEXT_WINDOW: '16384' }, 'minimal', false],
    ['a 32k window', { KEEL_CONTEXT_WINDOW: '32000' }, 'full', true],
    ['the default window', {}, 'full', true],
    ['a 4k window with the rule off', { KEEL_CONTEXT_WINDOW: '4000', KEEL_SMALL_WINDOW_TOKENS: '0' }, 'full', true],
    [
      'a 32k window under a raised limit',
      { KEEL_CONTEXT_WINDOW: '32000', KEEL_SMALL_WINDOW_TOKENS: '32000' },
      'minimal',
      false,
    ],
  ])('%s: main sessions get the %s prompt; subagent tools offered: %s', (_, env, mode, subagents) => {
    const config = configFromEnv(env);
    expect(mainPromptMode(config)).toBe(mode);
    expect(offersSubagentTools(config)).toBe(subagents);
  });

  it('keeps a prompt mode smaller than full, and spawning that is off', () => {
    expect(mainPromptMode(configFromEnv({ KEEL_CONTEXT_WINDOW: '4000', KEEL_PROMPT_MODE: 'none' }))).toBe('none');
    expect(offersSubagentTools(configFromEnv({ KEEL_SUBAGENT_MAX_DEPTH: '0' }))).toBe(false);
  });

  it('judges the window of the model asked about: its models entry', () => {
    const config = {
      ...configFromEnv({}),
      models: { providers: { anthropic: { models: [{ id: 'tiny', contextWindow: 8_000 }] } } },
    };
    expect(mainPromptMode(config, 'tiny')).toBe('minimal');
    expect(mainPromptMode(config)).toBe('full');
  });

  it('refuses a negative limit, naming the variable', () => {
    expect(() => configFromEnv({ KEEL_SMALL_WINDOW_TOKENS: '-1' })).toThrow(/KEEL_SMALL_WINDOW_TOKENS/);
  });
});
