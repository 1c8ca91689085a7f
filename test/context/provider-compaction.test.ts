import { activeMessages } from '../../src/context/active-context';
import {
  providerCompactionDetails,
  providerCompactionOf,
  summaryStandInNote,
} from '../../src/context/provider-compaction';
import type { CompactionEntry } from '../../src/context/types';

const entry = (details?: unknown): CompactionEntry => ({
  type: 'compaction',
  id: 'c1',
  parentId: null,
  timestamp: '2026-01-01T00:00:00Z',
  summary: 'S',
  firstKeptEntryId: 'c1',
  tokensBefore: 10,
  ...(details ? { details } : {}),
});

describe('provider compaction entries', () => {
  it('round-trips the block metadata through the entry; Keel-written entries have none', () => {
    const block = { summary: 'S', encryptedContent: 'E', signature: 'sig', toolChanges: [] };
    expect(providerCompactionOf(entry(providerCompactionDetails(block)))).toEqual(block);
    expect(providerCompactionOf(entry())).toBeUndefined();
    expect(providerCompactionOf(undefined)).toBeUndefined();
  });

  it("finds the stand-in's recall line only while the window still opens with it", () => {
    const range = { firstEntryId: 'a', lastEntryId: 'b', messages: 4 };
    const messages = activeMessages(entry(), [], range);
    expect(summaryStandInNote(messages, 'c1')).toBe(
      'The conversation so far was compacted. Compaction c1 summarized entries a…b (4 messages); use history_expand with this id for details.',
    );
    expect(summaryStandInNote(messages, 'c2')).toBeUndefined();
    expect(summaryStandInNote([{ role: 'user', content: 'hi' }], 'c1')).toBeUndefined();
  });
});
