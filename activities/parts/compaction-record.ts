/**
 * The compaction's row: recorded as running (answered from the record when a run with its id already
 * finished), then marked succeeded, skipped or failed, with one `compaction` log line and count, and
 * the `before_compaction` / `after_compaction` hooks.
 */
import { Context, log } from '@temporalio/activity';
import { depsForAgent } from '../../src/runtime/deps';
import { getEntry, loadActiveEntries } from '../../src/store/entries-repo';
import { createCompactionRow, getCompaction, markFailed, markSucceeded } from '../../src/store/compactions-repo';
import { EXTRACTIVE_SUMMARY_HEADER } from '../../src/compaction/extractive-summary';
import { summaryMessage } from '../../src/context/active-context';
import { logHookErrors, type CompactionContext } from './compaction-context';
import { rowTokens } from './compaction-entries';
import type {
  CompactionRef,
  FailCompactionInput,
  FinishCompactionInput,
  RecordCompactionStartInput,
  RecordedCompaction,
} from './compaction-io';

/**
 * Records the `compactions` row as running (idempotent by id) and fires `before_compaction` once.
 * When a run with this compaction id already recorded it, returns that record instead.
 */
export async function recordCompactionStart(
  ctx: CompactionContext,
  input: RecordCompactionStartInput,
): Promise<{ recorded?: RecordedCompaction }> {
  const recorded = await findRecorded(ctx, input);
  if (recorded) return { recorded };
  const firstAttempt = Context.current().info.attempt === 1;
  await createCompactionRow(ctx.db, {
    id: input.compactionId,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    trigger: input.trigger,
    workflowId: input.workflowId,
    retryOf: input.retryOf,
    now: new Date(input.now),
    countAttempt: firstAttempt,
    memoryFlush: input.memoryFlush ?? null,
    revertOf: input.revertOf ?? null,
    rerunOf: input.rerunOf ?? null,
  });
  if (firstAttempt) {
    ctx.allDeps.metrics?.compactionStarted(input.trigger);
    logHookErrors(input, await ctx.hooks.emit('before_compaction', { ...input }));
  }
  return {};
}

/** The finished row, or the compaction entry of this id when a run died between writing it and marking the row. */
async function findRecorded(ctx: CompactionContext, input: CompactionRef): Promise<RecordedCompaction | undefined> {
  const row = await getCompaction(ctx.db, input.agentId, input.compactionId);
  if (row && (row.status === 'succeeded' || row.status === 'skipped')) {
    return {
      status: row.status,
      degraded: row.degraded,
      tokensBefore: row.tokens_before ?? 0,
      tokensAfter: row.tokens_after ?? 0,
      firstKeptEntryId: row.first_kept_entry_id,
      entryId: row.entry_id,
      rowFinished: true,
    };
  }
  const stored = await getEntry(ctx.db, input.agentId, input.sessionId, input.compactionId);
  if (stored?.type !== 'compaction') return undefined;
  const entry = stored.payload;
  const active = await loadActiveEntries(ctx.db, input.agentId, input.sessionId);
  const kept = active.compaction?.id === entry.id ? rowTokens(active.rows) : 0;
  return {
    status: 'succeeded',
    degraded: entry.summary.startsWith(EXTRACTIVE_SUMMARY_HEADER),
    tokensBefore: entry.tokensBefore,
    tokensAfter: depsForAgent(ctx.allDeps, input.agentId).estimate(summaryMessage(entry)) + kept,
    firstKeptEntryId: entry.firstKeptEntryId,
    entryId: entry.id,
    rowFinished: false,
  };
}

/** Marks the row succeeded (or skipped) and fires `after_compaction` when this call finished it. */
export async function finishCompaction(ctx: CompactionContext, input: FinishCompactionInput): Promise<void> {
  const moved = await markSucceeded(ctx.db, {
    agentId: input.agentId,
    id: input.compactionId,
    status: input.status,
    degraded: input.degraded,
    tokensBefore: input.tokensBefore,
    tokensAfter: input.tokensAfter,
    firstKeptEntryId: input.firstKeptEntryId,
    entryId: input.entryId,
    now: new Date(input.now),
    ...(input.extractiveBecause ? { error: input.extractiveBecause } : {}),
  });
  if (moved) {
    const outcome = input.degraded ? `${input.status}_degraded` : input.status;
    await logCompaction(ctx, input, outcome, { tokensBefore: input.tokensBefore, tokensAfter: input.tokensAfter });
    const { now: _now, ...event } = input;
    logHookErrors(input, await ctx.hooks.emit('after_compaction', event));
  }
}

/** Marks the row failed with the error and counts a consecutive failure on the session (once). */
export async function failCompaction(ctx: CompactionContext, input: FailCompactionInput): Promise<void> {
  if (await markFailed(ctx.db, input.agentId, input.compactionId, input.error, new Date(input.now))) {
    await logCompaction(ctx, input, 'failed', { error: input.error });
  }
}

/** One `compaction` line and count per compaction, when this call moved its row (a retry logs nothing more). */
async function logCompaction(
  ctx: CompactionContext,
  input: CompactionRef & { now: string },
  outcome: string,
  facts: Record<string, unknown>,
): Promise<void> {
  const row = await getCompaction(ctx.db, input.agentId, input.compactionId);
  const trigger = row?.trigger ?? 'unknown';
  ctx.allDeps.metrics?.compaction(trigger, outcome);
  if (row)
    ctx.allDeps.metrics?.compactionBilled(trigger, {
      input: Number(row.summarizer_input_tokens ?? 0),
      output: Number(row.summarizer_output_tokens ?? 0),
      cache_read: Number(row.summarizer_cache_read_tokens ?? 0),
      cache_write: Number(row.summarizer_cache_write_tokens ?? 0),
    });
  const durationMs = row ? Date.parse(input.now) - new Date(row.started_at).getTime() : undefined;
  const line = { event: 'compaction', compactionId: input.compactionId, trigger, outcome, ...facts, durationMs };
  if (outcome === 'failed') log.warn('compaction', line);
  else log.info('compaction', line);
}
