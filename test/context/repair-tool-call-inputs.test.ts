import { ATTACHMENT_REDACTION_MARKER, repairToolCallInputs } from '../../src/context/repair-tool-call-inputs';
import type { AgentMessage, ToolCallBlock } from '../../src/context/types';
import { assistant, call, user } from './factories';

const withCall = (block: object): AgentMessage[] => [
  user('go'),
  assistant('thinking about it', block as ToolCallBlock),
];

describe('repairToolCallInputs', () => {
  it.each<[string, Record<string, unknown>]>([
    ['has neither input nor arguments', { type: 'toolCall', id: 'c1', name: 'read' }],
    ['has a null arguments and no input', { type: 'toolCall', id: 'c1', name: 'read', arguments: null }],
    ['has a non-object arguments', { type: 'toolCall', id: 'c1', name: 'read', arguments: 'path=a' }],
    ['has no id', { type: 'toolCall', name: 'read', arguments: {} }],
    ['has an empty id', { type: 'toolCall', id: '  ', name: 'read', arguments: {} }],
    ['has an empty name', { type: 'toolCall', id: 'c1', name: '', arguments: {} }],
    ['has a whitespace-only name', { type: 'toolCall', id: 'c1', name: '   ', arguments: {} }],
    ['has a name longer than 64 characters', { type: 'toolCall', id: 'c1', name: 'x'.repeat(65), arguments: {} }],
    [
      'has a name with characters outside [A-Za-z0-9_-]',
      { type: 'toolCall', id: 'c1', name: 'read file', arguments: {} },
    ],
    ['has a name with a dot', { type: 'toolCall', id: 'c1', name: 'fs.read', arguments: {} }],
  ])('drops a tool call that %s', (_label, block) => {
    const r = repairToolCallInputs(withCall(block));
    expect(r.droppedToolCalls).toBe(1);
    expect(r.droppedAssistantMessages).toBe(0);
    expect(r.messages[1]).toEqual({ ...assistant('thinking about it'), stopReason: 'toolUse' });
  });

  it.each([
    ['toolCall', 'arguments'],
    ['toolUse', 'input'],
    ['functionCall', 'arguments'],
    ['tool_use', 'input'],
    ['tool_call', 'arguments'],
    ['function_call', 'input'],
  ])('keeps a well-formed %s block carrying %s', (type, field) => {
    const messages = withCall({ type, id: 'c1', name: 'read', [field]: { path: 'x' } } as never);
    const r = repairToolCallInputs(messages);
    expect(r.messages).toBe(messages);
    expect(r.droppedToolCalls).toBe(0);
  });

  it('accepts a name of exactly 64 characters', () => {
    const messages = withCall(call('c1', 'a'.repeat(64)));
    expect(repairToolCallInputs(messages).messages).toBe(messages);
  });

  it('trims whitespace around names', () => {
    const r = repairToolCallInputs(withCall(call('c1', '  read\n')));
    expect((r.messages[1].content as ToolCallBlock[])[1].name).toBe('read');
    expect(r.droppedToolCalls).toBe(0);
  });

  it('drops an assistant message left with no blocks and counts it', () => {
    const messages: AgentMessage[] = [
      user('go'),
      { role: 'assistant', content: [call('', 'read')], stopReason: 'toolUse' },
      user('next'),
    ];
    const r = repairToolCallInputs(messages);
    expect(r.messages).toEqual([user('go'), user('next')]);
    expect(r).toMatchObject({ droppedToolCalls: 1, droppedAssistantMessages: 1 });
  });

  it('drops calls to tools outside the allow list, comparing names case-insensitively', () => {
    const messages: AgentMessage[] = [
      user('go'),
      assistant(call('c1', 'Read'), call('c2', 'exec'), call('c3', 'BROWSER')),
    ];
    const r = repairToolCallInputs(messages, { allowedToolNames: ['read', 'browser '] });
    expect((r.messages[1].content as ToolCallBlock[]).map((c) => c.id)).toEqual(['c1', 'c3']);
    expect(r.droppedToolCalls).toBe(1);
  });

  it('drops a call whose id repeats an earlier call id (duplicated entry)', () => {
    const a = assistant(call('c1'));
    const r = repairToolCallInputs([user('go'), a, user('again'), { ...a }]);
    expect(r.messages).toHaveLength(3);
    expect(r).toMatchObject({ droppedToolCalls: 1, droppedAssistantMessages: 1 });
  });

  it('replaces inline attachment content in sessions_spawn arguments with the redaction marker', () => {
    const spawn = call('c1', 'sessions_spawn', {
      task: 'summarise',
      attachments: [
        { name: 'a.png', content: 'iVBORw0KGgo...', encoding: 'base64' },
        { name: 'ref', path: '/x' },
      ],
    });
    const r = repairToolCallInputs(withCall(spawn));
    const args = (r.messages[1].content as ToolCallBlock[])[1].arguments as {
      task: string;
      attachments: Array<Record<string, unknown>>;
    };
    expect(args.task).toBe('summarise');
    expect(args.attachments[0]).toEqual({ name: 'a.png', content: ATTACHMENT_REDACTION_MARKER, encoding: 'base64' });
    expect(args.attachments[1]).toEqual({ name: 'ref', path: '/x' });
    expect(spawn.arguments!.attachments).not.toBe(args.attachments); // the input is not mutated
    // Already redacted: nothing changes the second time.
    expect(repairToolCallInputs(r.messages).messages).toBe(r.messages);
  });

  it('returns the same array when nothing changes', () => {
    const messages = [user('hi'), assistant('hello'), assistant(call('c1'))];
    expect(repairToolCallInputs(messages).messages).toBe(messages);
  });
});
