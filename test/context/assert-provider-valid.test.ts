import {
  assertProviderValid,
  ProviderMessagesInvalidError,
  toAnthropicShape,
  type ProviderRule,
} from '../support/assert-provider-valid';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, user } from './factories';

function ruleBroken(messages: AgentMessage[]): { rule: ProviderRule; messageIndex: number } | undefined {
  try {
    assertProviderValid(messages);
    return undefined;
  } catch (error) {
    if (!(error instanceof ProviderMessagesInvalidError)) throw error;
    return { rule: error.rule, messageIndex: error.messageIndex };
  }
}

describe('assertProviderValid', () => {
  it.each<[string, AgentMessage[]]>([
    ['a plain conversation', [user('q'), assistant('a'), user('r')]],
    [
      'a tool batch answered in the next user turn',
      [user('q'), assistant(call('a'), call('b')), result('a'), result('b'), assistant('done')],
    ],
    [
      'tool results followed by user text in the same API turn',
      [user('q'), assistant(call('a')), result('a'), user('more')],
    ],
    ['an empty transcript', []],
  ])('accepts %s', (_label, messages) => {
    expect(ruleBroken(messages)).toBeUndefined();
  });

  it.each<[ProviderRule, number, AgentMessage[]]>([
    ['first-message-from-user', 0, [assistant('hi'), user('q')]],
    ['roles-alternate', 2, [user('q'), assistant('a'), assistant('b')]],
    ['no-empty-content', 1, [user('q'), { role: 'assistant', content: [] }]],
    ['no-empty-content', 0, [user('  ')]],
    [
      'no-empty-content',
      2,
      [user('q'), assistant(call('a')), { ...result('a'), content: [{ type: 'text', text: '' }] }],
    ],
    ['tool-use-well-formed', 1, [user('q'), assistant({ ...call('a'), name: 'bad name' }), result('a')]],
    ['tool-use-well-formed', 1, [user('q'), assistant({ type: 'toolCall', id: 'a', name: 'read' }), result('a')]],
    ['tool-use-ids-unique', 3, [user('q'), assistant(call('a')), result('a'), assistant(call('a')), result('a')]],
    ['tool-use-answered-next', 1, [user('q'), assistant(call('a'))]],
    ['tool-use-answered-next', 1, [user('q'), assistant(call('a'), call('b')), result('a')]],
    ['tool-result-answers-previous', 2, [user('q'), assistant('a'), result('x')]],
    ['tool-result-answers-previous', 2, [user('q'), assistant(call('a')), result('a'), result('a')]],
    ['tool-results-first', 2, [user('q'), assistant(call('a')), user('interrupt'), result('a')]],
  ])('rejects a break of %s at message %i', (rule, messageIndex, messages) => {
    expect(ruleBroken(messages)).toEqual({ rule, messageIndex });
  });

  it('says which rule and index in its message', () => {
    expect(() => assertProviderValid([assistant('x')])).toThrow(/messages\[0\].*first-message-from-user/);
  });
});

describe('toAnthropicShape', () => {
  it('merges tool results and following user text into one user message, in order', () => {
    const api = toAnthropicShape([user('q'), assistant(call('a')), result('a'), user('more')]);
    expect(api.map((m) => [m.role, m.content.map((b) => b.type), m.sourceIndex])).toEqual([
      ['user', ['text'], 0],
      ['assistant', ['tool_use'], 1],
      ['user', ['tool_result', 'text'], 2],
    ]);
  });
});
