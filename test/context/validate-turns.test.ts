import { validateTurns } from '../../src/context/validate-turns';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, shape, user } from './factories';

const validateAnthropicTurns = (m: AgentMessage[]) =>
  validateTurns(m, { mergeAssistantsWithToolCalls: false }).messages;
const validateGeminiTurns = (m: AgentMessage[]) => validateTurns(m, { mergeAssistantsWithToolCalls: true }).messages;

const anthropic = { mergeAssistantsWithToolCalls: false };

describe('validateTurns with Anthropic rules', () => {
  it.each<[string, AgentMessage[], string[]]>([
    [
      'merges consecutive user messages, keeping both texts',
      [user('a'), user('b'), assistant('ok')],
      ['u:a\n\nb', 'a:ok'],
    ],
    [
      'merges a string user message with a block user message',
      [
        user('a'),
        {
          role: 'user',
          content: [
            { type: 'text', text: 'b' },
            { type: 'image', url: 'x' },
          ],
        },
      ],
      ['u:a|b|image'],
    ],
    [
      'drops assistant messages before the first user message',
      [assistant('hi'), user('q'), assistant('a')],
      ['u:q', 'a:a'],
    ],
    [
      'drops a leading tool batch (assistant with calls and its results) before the first user message',
      [assistant(call('c')), result('c'), user('q')],
      ['u:q'],
    ],
    [
      'drops a user message with empty text',
      [user('q'), assistant('a'), user('   '), user('r')],
      ['u:q', 'a:a', 'u:r'],
    ],
    [
      'drops an assistant message with no content and merges the user turns it separated',
      [user('q'), { role: 'assistant', content: [] }, user('r')],
      ['u:q\n\nr'],
    ],
    [
      'drops blank text blocks inside an assistant message',
      [
        user('q'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'x' },
          ],
        },
      ],
      ['u:q', 'a:x'],
    ],
    [
      'merges consecutive assistant messages when the first has no tool calls',
      [user('q'), assistant('a1'), assistant('a2', call('c')), result('c')],
      ['u:q', 'a:a1|a2[c]', 'r:c'],
    ],
    [
      'removes the partial tool calls of an aborted assistant and the results that answer them',
      [user('q'), { ...assistant('partial', call('c')), stopReason: 'aborted' }, result('c'), user('again')],
      ['u:q', 'a:partial', 'u:again'],
    ],
    [
      'drops an errored assistant message left empty once its partial call is removed',
      [user('q'), { ...assistant(call('c')), stopReason: 'error' }, user('again')],
      ['u:q\n\nagain'],
    ],
  ])('%s', (_rule, input, expected) => {
    expect(shape(validateAnthropicTurns(input))).toEqual(expected);
  });

  it('keeps tool results next to their assistant (it does not merge user text into a tool batch)', () => {
    const input = [user('q'), assistant(call('c')), result('c'), user('next')];
    expect(validateAnthropicTurns(input)).toBe(input);
  });

  it('returns the same array when the turns are already valid', () => {
    const input = [user('q'), assistant('a'), user('r'), assistant('b')];
    expect(validateAnthropicTurns(input)).toBe(input);
  });

  it('reports what it changed', () => {
    const { report } = validateTurns(
      [
        assistant('lead'),
        user('a'),
        user(' '),
        user('b'),
        { ...assistant(call('c')), stopReason: 'error' },
        result('c'),
      ],
      anthropic,
    );
    expect(report).toEqual({
      strippedPartialToolCalls: 1,
      droppedPartialToolResults: 1,
      droppedEmptyMessages: 2,
      droppedLeadingMessages: 1,
      mergedUserMessages: 1,
      mergedAssistantMessages: 0,
    });
  });
});

describe('validateTurns with Gemini rules', () => {
  it('merges consecutive model turns even when the first carries tool calls', () => {
    expect(shape(validateGeminiTurns([user('q'), assistant(call('c')), assistant('more')]))).toEqual([
      'u:q',
      'a:more[c]',
    ]);
  });

  it('starts with a user turn and merges consecutive user turns', () => {
    expect(shape(validateGeminiTurns([assistant('x'), user('a'), user('b')]))).toEqual(['u:a\n\nb']);
  });
});
