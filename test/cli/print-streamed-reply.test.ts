import { printStreamedReply } from '../../src/cli/print-streamed-reply';
import type { ReplyStreamItem } from '../../src/client/keel-client';
import type { TurnResult } from '../../src/protocol';

async function* stream(items: ReplyStreamItem[]): AsyncGenerator<ReplyStreamItem> {
  for (const item of items) yield item;
}

const reply = (over: Partial<TurnResult>): ReplyStreamItem => ({
  type: 'reply',
  result: {
    reply: 'Done.',
    silent: false,
    userEntryId: 'u',
    assistantEntryId: 'a',
    turn: 1,
    usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    modelCalls: 2,
    ...over,
  },
});

async function printed(items: ReplyStreamItem[]): Promise<string> {
  let out = '';
  await printStreamedReply(stream(items), () => undefined, { write: (text) => (out += text), isTTY: false });
  return out;
}

describe('printStreamedReply', () => {
  it('prints each tool call when it has run, between the texts of the calls around it, and once', async () => {
    const out = await printed([
      { type: 'text', delta: 'Looking.', soFar: 'Looking.', call: 0 },
      { type: 'tool', id: 't1', name: 'read_file', isError: false },
      { type: 'tool', id: 't2', name: 'exec', isError: true, error: 'command not found: frob' },
      { type: 'text', delta: 'Done.', soFar: 'Looking.Done.', call: 1 },
      // The result lists every call: the spawn the workflow ran itself had no notice.
      reply({
        toolCalls: [
          { id: 't1', name: 'read_file', isError: false },
          { id: 't2', name: 'exec', isError: true },
          { id: 's1', name: 'sessions_spawn', isError: false },
        ],
      }),
    ]);
    expect(out).toBe(
      'keel › Looking.\n  ⚙ read_file ok\n  ⚙ exec error: command not found: frob\nkeel › Done.\n  ⚙ sessions_spawn ok\n',
    );
  });

  it('without a stream, prints the reply whole, then every tool call of the turn', async () => {
    const out = await printed([
      reply({
        toolCalls: [
          { id: 't1', name: 'read_file', isError: false },
          { name: 'exec', isError: false },
        ],
      }),
    ]);
    expect(out).toBe('keel › Done.\n  ⚙ read_file ok\n  ⚙ exec ok\n');
  });
});
