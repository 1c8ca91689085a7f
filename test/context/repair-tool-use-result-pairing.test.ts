import { MISSING_TOOL_RESULT_TEXT } from '../../src/context/message-parts';
import { repairToolUseResultPairing } from '../../src/context/repair-tool-use-result-pairing';
import type { AgentMessage, ToolResultMessage } from '../../src/context/types';
import { assistant, call, result, shape, user } from './factories';

interface Case {
  rule: string;
  input: AgentMessage[];
  expected: string[];
  report: { added: number; droppedDuplicateCount: number; droppedOrphanCount: number; moved: boolean };
}

const none = { added: 0, droppedDuplicateCount: 0, droppedOrphanCount: 0, moved: false };

const cases: Case[] = [
  {
    rule: 'moves results directly after their assistant, in the order of the calls',
    input: [user('q'), assistant(call('a'), call('b')), result('b'), result('a')],
    expected: ['u:q', 'a:[a,b]', 'r:a', 'r:b'],
    report: { ...none, moved: true },
  },
  {
    rule: 'puts a displaced user turn after the results',
    input: [user('q'), assistant(call('a')), user('interrupt'), result('a')],
    expected: ['u:q', 'a:[a]', 'r:a', 'u:interrupt'],
    report: { ...none, moved: true },
  },
  {
    rule: 'inserts a synthetic error result when a call has no result',
    input: [user('q'), assistant(call('a'), call('b')), result('a'), user('next')],
    expected: ['u:q', 'a:[a,b]', 'r:a', 'r:b!', 'u:next'],
    report: { ...none, added: 1 },
  },
  {
    rule: 'inserts a synthetic result for a call at the very end of the transcript',
    input: [user('q'), assistant(call('a'))],
    expected: ['u:q', 'a:[a]', 'r:a!'],
    report: { ...none, added: 1 },
  },
  {
    rule: 'keeps the first of duplicate results in one span and drops the rest',
    input: [user('q'), assistant(call('a')), result('a', 'first'), result('a', 'second')],
    expected: ['u:q', 'a:[a]', 'r:a'],
    report: { ...none, droppedDuplicateCount: 1 },
  },
  {
    rule: 'drops a result whose id was answered in an earlier span as a duplicate',
    input: [user('q'), assistant(call('a')), result('a'), assistant(call('b')), result('a'), result('b')],
    expected: ['u:q', 'a:[a]', 'r:a', 'a:[b]', 'r:b'],
    report: { ...none, droppedDuplicateCount: 1 },
  },
  {
    rule: 'drops a result that matches no call of the preceding assistant as an orphan',
    input: [user('q'), assistant(call('a')), result('a'), result('zzz')],
    expected: ['u:q', 'a:[a]', 'r:a'],
    report: { ...none, droppedOrphanCount: 1 },
  },
  {
    rule: 'drops a result that appears before any assistant as an orphan',
    input: [result('a'), user('q'), assistant('hello')],
    expected: ['u:q', 'a:hello'],
    report: { ...none, droppedOrphanCount: 1 },
  },
  {
    rule: 'drops a result that follows an assistant without tool calls',
    input: [user('q'), assistant('plain'), result('a')],
    expected: ['u:q', 'a:plain'],
    report: { ...none, droppedOrphanCount: 1 },
  },
  {
    rule: 'treats a result whose call belongs to a later assistant as an orphan and answers the later call synthetically',
    input: [user('q'), result('a'), assistant(call('a'))],
    expected: ['u:q', 'a:[a]', 'r:a!'],
    report: { ...none, added: 1, droppedOrphanCount: 1 },
  },
];

describe('repairToolUseResultPairing', () => {
  it.each(cases)('$rule', ({ input, expected, report }) => {
    const r = repairToolUseResultPairing(input);
    expect(shape(r.messages)).toEqual(expected);
    expect({ ...r, added: r.added.length, messages: undefined }).toEqual({ ...report, messages: undefined });
  });

  it.each(['error', 'aborted'])(
    'skips an assistant with stopReason %s: no synthetic result, its results become orphans',
    (stopReason) => {
      const partial = { ...assistant(call('a')), stopReason };
      const r = repairToolUseResultPairing([user('q'), partial, result('a'), user('retry')]);
      expect(shape(r.messages)).toEqual(['u:q', 'a:[a]', 'u:retry']);
      expect(r.added).toHaveLength(0);
      expect(r.droppedOrphanCount).toBe(1);
    },
  );

  it('builds the synthetic result as an error naming the call, saying it was inserted for repair', () => {
    const r = repairToolUseResultPairing([user('q'), assistant(call('a', 'exec'))]);
    expect(r.added[0]).toEqual({
      role: 'toolResult',
      toolCallId: 'a',
      toolName: 'exec',
      isError: true,
      content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
    });
    expect(MISSING_TOOL_RESULT_TEXT).toMatch(/missing/);
    expect(MISSING_TOOL_RESULT_TEXT).toMatch(/inserted for transcript repair/);
  });

  it('names the synthetic result "unknown" when the call has no name', () => {
    const r = repairToolUseResultPairing([user('q'), assistant({ ...call('a'), name: '' })]);
    expect(r.added[0].toolName).toBe('unknown');
  });

  it('gives a result with an empty tool name the name of its call', () => {
    const r = repairToolUseResultPairing([user('q'), assistant(call('a', 'exec')), result('a', 'out', '')]);
    expect((r.messages[2] as ToolResultMessage).toolName).toBe('exec');
    expect(r.moved).toBe(false);
  });

  it('returns the same array when nothing changes', () => {
    const input = [user('q'), assistant(call('a'), call('b')), result('a'), result('b'), user('u2'), assistant('done')];
    const r = repairToolUseResultPairing(input);
    expect(r.messages).toBe(input);
    expect({ ...r, messages: undefined, added: r.added.length }).toEqual({ ...none, messages: undefined });
  });

  it('is idempotent: repairing a repaired transcript changes nothing', () => {
    const once = repairToolUseResultPairing([
      user('q'),
      assistant(call('a'), call('b')),
      user('x'),
      result('b'),
      result('c'),
    ]);
    expect(repairToolUseResultPairing(once.messages).messages).toBe(once.messages);
  });

  describe('Anthropic-native tool_result blocks in user messages', () => {
    it('turns them into toolResult messages placed before the rest of the user content', () => {
      const native = {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: 'file body', is_error: false },
          { type: 'text', text: 'and also this' },
        ],
      } as unknown as AgentMessage;
      const r = repairToolUseResultPairing([user('q'), assistant(call('a', 'read')), native]);
      expect(shape(r.messages)).toEqual(['u:q', 'a:[a]', 'r:a', 'u:and also this']);
      const converted = r.messages[2] as ToolResultMessage;
      expect(converted).toMatchObject({
        toolName: 'read',
        isError: false,
        content: [{ type: 'text', text: 'file body' }],
      });
    });

    it('keeps array content and the error flag of a native result', () => {
      const native = {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'boom' }], is_error: true }],
      } as unknown as AgentMessage;
      const r = repairToolUseResultPairing([user('q'), assistant(call('a', 'exec')), native]);
      expect(shape(r.messages)).toEqual(['u:q', 'a:[a]', 'r:a!']);
      expect((r.messages[2] as ToolResultMessage).content).toEqual([{ type: 'text', text: 'boom' }]);
    });
  });
});
