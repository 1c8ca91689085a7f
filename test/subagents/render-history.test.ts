import { renderHistoryEntry } from '../../src/subagents/render-history';
import type { TranscriptEntry } from '../../src/context/types';

const message = (m: unknown): TranscriptEntry =>
  ({ type: 'message', id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:00Z', message: m }) as TranscriptEntry;

describe('renderHistoryEntry', () => {
  it('renders a user message of blocks as its text, and other blocks by their type', () => {
    const entry = message({
      role: 'user',
      content: [
        { type: 'text', text: 'look at this' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      timestamp: 0,
    });
    expect(renderHistoryEntry(entry)).toBe('user: look at this [image]');
  });

  it('renders a tool result with its tool name and error mark', () => {
    const entry = message({
      role: 'toolResult',
      toolCallId: 't1',
      toolName: 'read',
      isError: true,
      content: [{ type: 'text', text: 'no such file' }],
      timestamp: 0,
    });
    expect(renderHistoryEntry(entry)).toBe('tool result read (error): no such file');
  });
});
