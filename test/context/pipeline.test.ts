import { assertProviderValid } from '../support/assert-provider-valid';
import { runContextPipeline, turnRulesFor } from '../../src/context/pipeline';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, shape, user } from './factories';

describe('runContextPipeline', () => {
  it('returns the same array and an all-zero report for a clean transcript', () => {
    const input = [user('q'), assistant(call('a')), result('a'), assistant('done')];
    const r = runContextPipeline(input, { provider: 'anthropic' });
    expect(r.messages).toBe(input);
    expect(r.report.toolCallInputs).toEqual({ droppedToolCalls: 0, droppedAssistantMessages: 0 });
    expect(r.report.pairing).toEqual({ added: 0, droppedDuplicateCount: 0, droppedOrphanCount: 0, moved: false });
    expect(r.report.strippedDetails).toBe(0);
  });

  it('runs every step in order and reports each step', () => {
    const input: AgentMessage[] = [
      user('old'),
      assistant('old answer'),
      user('q'),
      assistant(call('a'), { ...call('bad'), name: 'not valid!' }),
      user('displaced'),
      { ...result('a'), details: { raw: 'x' } },
      result('ghost'),
      user('follow-up'),
      assistant(call('b')),
    ];
    const r = runContextPipeline(input, { provider: 'anthropic', historyLimit: 2 });
    // Merging "displaced" and "follow-up" makes one user turn, so two turns reach back to "q".
    expect(shape(r.messages)).toEqual(['u:q', 'a:[a]', 'r:a', 'u:displaced\n\nfollow-up', 'a:[b]', 'r:b!']);
    expect(r.report.toolCallInputs.droppedToolCalls).toBe(1);
    expect(r.report.pairing).toMatchObject({ added: 1, droppedOrphanCount: 1, moved: true });
    expect(r.report.turns).toMatchObject({ rules: 'anthropic', mergedUserMessages: 1 });
    expect(r.report.historyLimit).toEqual({ limit: 2, droppedMessageCount: 2 });
    expect(r.report.strippedDetails).toBe(1);
    expect(() => assertProviderValid(r.messages)).not.toThrow();
  });

  it('strips details from tool results that survive', () => {
    const r = runContextPipeline([user('q'), assistant(call('a')), { ...result('a'), details: { d: 1 } }], {
      provider: 'openai',
    });
    expect(r.report.strippedDetails).toBe(1);
    expect('details' in r.messages[2]).toBe(false);
    expect(r.report.turns).toBeUndefined();
  });

  it('drops calls outside allowedToolNames and pairs what is left', () => {
    const r = runContextPipeline(
      [user('q'), assistant(call('a', 'exec'), call('b', 'read')), result('a'), result('b')],
      {
        provider: 'anthropic',
        allowedToolNames: ['READ'],
      },
    );
    expect(shape(r.messages)).toEqual(['u:q', 'a:[b]', 'r:b']);
    expect(r.report.pairing.droppedOrphanCount).toBe(1);
  });
});

describe('turnRulesFor', () => {
  it.each([
    ['anthropic', 'anthropic'],
    ['amazon-bedrock', 'anthropic'],
    ['google', 'gemini'],
    ['google-gemini-cli', 'gemini'],
    ['openai', undefined],
  ])('maps %s to %s', (provider, rules) => {
    expect(turnRulesFor(provider)).toBe(rules);
  });
});
