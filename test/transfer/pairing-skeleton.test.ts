import fc from 'fast-check';
import { repairToolUseResultPairing } from '../../src/context/repair-tool-use-result-pairing';
import type { AgentMessage, TranscriptEntry } from '../../src/context/types';
import { WindowSkeletons } from '../../src/transfer/pairing-skeleton';
import { activeMessages } from '../../src/context/active-context';
import { announcedSeed } from '../support/test-seed';

const seed = announcedSeed('KEEL_FUZZ_SEED', 'pairing-skeleton');

/** Ids from a small pool, so calls, results, duplicates and orphans meet often. */
const id = fc.constantFrom('a', 'b', 'c', 'd', '');
const name = fc.constantFrom('read', 'write', '', ' ');
const text = fc.constantFrom('hello', '', 'a longer piece of text');

const toolCall = fc.record({
  type: fc.constantFrom('toolCall', 'tool_use', 'functionCall'),
  id,
  name,
  arguments: fc.constant({ path: '/x' }),
});
const assistant = fc.record({
  role: fc.constant('assistant' as const),
  content: fc.array(
    fc.oneof(
      toolCall,
      fc.record({ type: fc.constant('text'), text }),
      fc.record({ type: fc.constant('thinking'), thinking: text }),
    ),
    { maxLength: 4 },
  ),
  stopReason: fc.option(fc.constantFrom('stop', 'toolUse', 'error', 'aborted', 'length'), { nil: undefined }),
});
const toolResult = fc.record({
  role: fc.constant('toolResult' as const),
  toolCallId: id,
  toolName: name,
  content: fc.constant([{ type: 'text', text: 'result' }]),
  isError: fc.boolean(),
});
const nativeResult = fc.record({
  type: fc.constant('tool_result'),
  tool_use_id: id,
  content: fc.oneof(text, fc.constant([{ type: 'text', text: 'r' }])),
  is_error: fc.boolean(),
});
const user = fc.record({
  role: fc.constant('user' as const),
  content: fc.oneof(
    text,
    fc.array(fc.oneof(nativeResult, fc.record({ type: fc.constant('text'), text }), fc.constant(null)), {
      maxLength: 4,
    }),
  ),
});
const message = fc.oneof(assistant, toolResult, user) as fc.Arbitrary<AgentMessage>;
/** One line of a file; ids are given by position (the store keys rows by id, the repairer drops repeats). */
type Line = (id: string, ids: readonly string[]) => TranscriptEntry;
const at = { parentId: null, timestamp: '2026-01-01T00:00:00Z' };
const line: fc.Arbitrary<Line> = fc.oneof(
  { weight: 6, arbitrary: message.map((m): Line => (id) => ({ type: 'message', id, ...at, message: m })) },
  {
    weight: 1,
    arbitrary: user.map((u): Line => (id) => ({
      type: 'custom_message',
      customType: 'note',
      content: u.content as never,
      id,
      ...at,
    })),
  },
  { weight: 1, arbitrary: fc.constant<Line>((id) => ({ type: 'custom', customType: 'x', id, ...at })) },
  {
    weight: 1,
    // A compaction keeping from an entry of the file (before or after it), or from one that is not there; sometimes a revert to no summary.
    arbitrary: fc.record({ pick: fc.nat(), missing: fc.boolean(), revert: fc.boolean() }).map(
      ({ pick, missing, revert }): Line =>
        (id, ids) =>
          ({
            type: 'compaction',
            id,
            ...at,
            summary: 's',
            firstKeptEntryId: missing || ids.length === 0 ? 'gone' : ids[pick % ids.length]!,
            tokensBefore: 1,
            ...(revert ? { revertOf: 'earlier' } : {}),
          }) as TranscriptEntry,
    ),
  },
);
const file = fc.array(line, { maxLength: 16 }).map((lines) => {
  const ids = lines.map((_, i) => `e${i}`);
  return lines.map((make, i) => make(ids[i]!, ids));
});

/** What `loadActiveEntries` + `activeMessages` give for these rows (seq = position), written out plainly. */
function windowOf(entries: readonly TranscriptEntry[]): AgentMessage[] {
  const lastAt = entries.map((e) => e.type).lastIndexOf('compaction');
  const compaction = lastAt >= 0 ? (entries[lastAt] as Extract<TranscriptEntry, { type: 'compaction' }>) : undefined;
  let fromSeq = 0;
  if (compaction) {
    const kept = entries.findIndex((e) => e.id === compaction.firstKeptEntryId);
    fromSeq = kept >= 0 ? kept : lastAt;
  }
  const rows = entries
    .filter((e, seq) => seq >= fromSeq && e.type !== 'compaction')
    .map((entry) => ({ id: entry.id, entry }));
  const withSummary = compaction && !(compaction.revertOf !== undefined && compaction.rangeOf === undefined);
  return activeMessages(withSummary ? compaction : undefined, rows);
}

function counts(messages: AgentMessage[]) {
  const r = repairToolUseResultPairing(messages);
  return {
    added: r.added.length,
    droppedDuplicates: r.droppedDuplicateCount,
    droppedOrphans: r.droppedOrphanCount,
    moved: r.moved,
  };
}

function skeletonWindow(entries: readonly TranscriptEntry[], max = 1_000): AgentMessage[] | undefined {
  const window = new WindowSkeletons(max);
  for (const entry of entries) window.add(entry);
  return window.messages();
}

describe("the import's pairing skeletons", () => {
  it('give the pairing repair the same counts as the stored window read back (calls, results, native result blocks, partial stops, duplicates, orphans, compactions)', () => {
    let withRepairs = 0;
    let compacted = 0;
    fc.assert(
      fc.property(file, (entries) => {
        const full = counts(windowOf(entries));
        expect(counts(skeletonWindow(entries)!)).toEqual(full);
        if (full.added + full.droppedDuplicates + full.droppedOrphans > 0 || full.moved) withRepairs += 1;
        if (entries.some((e) => e.type === 'compaction')) compacted += 1;
      }),
      { seed, numRuns: 2_000 },
    );
    // The generator reaches the repair's interesting cases and compacted files, not only clean transcripts.
    expect(withRepairs).toBeGreaterThan(500);
    expect(compacted).toBeGreaterThan(500);
  });

  it('give up past their bound, so the import reads the session back instead', () => {
    const entries = Array.from({ length: 5 }, (_, i): TranscriptEntry => ({
      type: 'message',
      id: `e${i}`,
      ...at,
      message: { role: 'user', content: 'hi' },
    }));
    expect(skeletonWindow(entries, 5)).toHaveLength(5);
    expect(skeletonWindow([...entries, { ...entries[0]!, id: 'e5' }], 5)).toBeUndefined();
  });

  it('keep no tool arguments or text', () => {
    const window = skeletonWindow([
      {
        type: 'message',
        id: 'm',
        ...at,
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'secret plan' },
            { type: 'toolCall', id: 't1', name: 'write', arguments: { body: 'secret body' } },
          ],
        },
      },
      {
        type: 'message',
        id: 'r',
        ...at,
        message: {
          role: 'toolResult',
          toolCallId: 't1',
          toolName: 'write',
          content: [{ type: 'text', text: 'secret result' }],
        },
      },
    ]);
    expect(JSON.stringify(window)).not.toContain('secret');
    expect(window![0]).toEqual({
      role: 'assistant',
      stopReason: undefined,
      content: [{ type: 'toolCall', id: 't1', name: 'write' }],
    });
  });
});
