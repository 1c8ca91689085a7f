/**
 * `keel compactions revert`: the entry that restores the window from before a compaction, measured
 * like a compaction's tokens after (summary and messages), so the session's counters stay comparable.
 */
import { log } from '@temporalio/activity';
import type { ActivityDeps } from '../../src/runtime/deps';
import { depsForAgent } from '../../src/runtime/deps';
import { entriesInSeqRange, getEntry, loadActiveEntries } from '../../src/store/entries-repo';
import { writeRevertRecord } from '../../src/store/compactions-repo';
import { planRevert } from '../../src/store/compaction-lineage';
import type { CompactionOutcome } from '../../src/compaction/types';
import { summaryMessage } from '../../src/context/active-context';
import type { EntryRow } from '../../src/store/entry-row';
import { editing, type CompactionContext } from './compaction-context';
import { planMessageOf, summaryTokens } from './compaction-entries';
import type { CompactionRef, RevertCompactionInput } from './compaction-io';

/**
 * Appends the entry that restores the window from before the compaction (resolved here, inside the
 * session's one compaction run, so nothing moved in between) and sets the session's context tokens, once.
 */
export async function revertCompactionStep(
  ctx: CompactionContext,
  input: RevertCompactionInput,
): Promise<CompactionOutcome> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const stored = await getEntry(ctx.db, input.agentId, input.sessionId, input.compactionId);
  const storedEntry = stored?.type === 'compaction' ? stored.payload : undefined;
  const revert = storedEntry ? undefined : await editing(() => planRevert(ctx.db, input.agentId, input.revertOf));
  const restored = revert?.restored ?? storedEntry!;
  // Both measured alike (summary + messages, as a compaction's tokens after): the window now, and the restored one.
  const tokensBefore = revert ? await activeWindowTokens(ctx, deps, input) : storedEntry!.tokensBefore;
  const tokensAfter = await windowTokens(ctx, deps, input, restored);
  if (revert) {
    await writeRevertRecord(ctx.db, {
      ...input,
      entryId: input.compactionId,
      restored,
      tokensBefore,
      tokensAfter,
      now: new Date(input.now),
    });
    log.info('compaction reverted', {
      sessionKey: input.sessionKey,
      compactionId: input.compactionId,
      revertOf: input.revertOf,
      laterCompactionsUndone: revert.laterCompactions,
      tokensAfter,
    });
  }
  return {
    status: 'succeeded',
    degraded: false,
    tokensBefore,
    tokensAfter,
    firstKeptEntryId: restored.firstKeptEntryId,
    entryId: input.compactionId,
  };
}

/** Estimated tokens of the session's window now (its summary, when it has one, and its messages). */
async function activeWindowTokens(ctx: CompactionContext, deps: ActivityDeps, ref: CompactionRef): Promise<number> {
  const active = await loadActiveEntries(ctx.db, ref.agentId, ref.sessionId);
  const summary = active.compaction ? deps.estimate(summaryMessage(active.compaction)) : 0;
  return summary + messageTokens(deps, active.rows);
}

/** Estimated tokens of a window: its summary message (when it has one) and the message entries from its first kept entry on. */
async function windowTokens(
  ctx: CompactionContext,
  deps: ActivityDeps,
  ref: CompactionRef,
  window: { summary: string; firstKeptEntryId: string },
): Promise<number> {
  const first = await getEntry(ctx.db, ref.agentId, ref.sessionId, window.firstKeptEntryId);
  const rows = first ? await entriesInSeqRange(ctx.db, ref.agentId, ref.sessionId, { from: Number(first.seq) }) : [];
  const summary = window.summary ? summaryTokens(deps.estimate, ref.compactionId, window.summary) : 0;
  return summary + messageTokens(deps, rows);
}

/** The message rows' stored estimates (estimated now where a row has none); other rows count nothing. */
function messageTokens(deps: ActivityDeps, rows: readonly EntryRow[]): number {
  let tokens = 0;
  for (const r of rows) {
    const message = planMessageOf(r);
    if (message) tokens += r.token_estimate ?? deps.estimate(message);
  }
  return tokens;
}
