/**
 * Writing a compaction's summary: the compaction entry and the session's counters in one transaction,
 * once; nothing when it would not make the context smaller; or, for a rerun not applied, on its row.
 */
import { log } from '@temporalio/activity';
import { depsForAgent } from '../../src/runtime/deps';
import { getEntry, latestCompactionEntryId } from '../../src/store/entries-repo';
import {
  recordUnreclaimedCompaction,
  storeRerunSummary,
  writeCompactionRecord,
} from '../../src/store/compactions-repo';
import { withSubagentsInFlight } from '../../src/compaction/subagents-in-flight';
import { withTaskInProgress } from '../../src/compaction/task-in-progress';
import { reclaimsTokens } from '../../src/compaction/compaction-cycle';
import { decodeEntryRowOf } from '../../src/store/entry-row';
import { liveChildren } from '../../src/store/subagent-runs-repo';
import type { CompactionContext } from './compaction-context';
import { summaryTokens } from './compaction-entries';
import type { StoreRerunSummaryInput, WriteCompactionRecordInput, WriteCompactionRecordResult } from './compaction-io';
import { logRedactions } from './model-call-report';

/**
 * Writes the compaction entry and session counters in one transaction, once (deterministic entry id).
 * The summary gets the subagents still running, whichever summarizer wrote it, so the agent does
 * not spawn them again once the conversation that started them is gone.
 */
export async function writeCompactionRecordStep(
  ctx: CompactionContext,
  input: WriteCompactionRecordInput,
): Promise<WriteCompactionRecordResult> {
  const { db } = ctx;
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const entryId = input.compactionId;
  const summary = withTaskInProgress(
    withSubagentsInFlight(input.summary, await liveChildren(db, input.agentId, input.sessionKey)),
    await summarizedTask(ctx, input),
  );
  if (await superseded(ctx, input))
    return { entryId: null, inserted: false, tokensAfter: input.tokensBefore, superseded: true };
  const tokensWith = (text: string) => summaryTokens(deps.estimate, entryId, text) + input.keptTokens;
  const tokensAfter = tokensWith(summary);
  // Whoever asked, a summary that reclaims nothing is not written, and the storm hold learns it. An
  // operator's rerun applied to an earlier range is theirs to judge.
  if (
    !input.lineage &&
    !reclaimsTokens({ tokensBefore: input.tokensBefore, tokensAfter }) &&
    !(await getEntry(db, input.agentId, input.sessionId, entryId))
  )
    return recordUnreclaimed(ctx, input, tokensAfter);
  const { inserted, redactions } = await writeCompactionRecord(db, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    entryId,
    summary,
    firstKeptEntryId: input.firstKeptEntryId,
    tokensBefore: input.tokensBefore,
    tokensAfter,
    now: new Date(input.now),
    ...(input.lineage ? { lineage: input.lineage } : {}),
    ...(input.promptOverheadTokens !== undefined ? { promptOverheadTokens: input.promptOverheadTokens } : {}),
  });
  logRedactions('compaction_summary', redactions, { compactionId: input.compactionId });
  if (inserted) return { entryId, inserted, tokensAfter };
  // An earlier attempt wrote the entry, with the runs in flight then: count what it stored.
  const stored = await getEntry(db, input.agentId, input.sessionId, entryId);
  const storedSummary = stored?.type === 'compaction' ? stored.payload.summary : summary;
  return { entryId, inserted, tokensAfter: tokensWith(storedSummary) };
}

/** Another compaction entry was written since this one's plan (and this one's is not written yet). */
async function superseded(ctx: CompactionContext, input: WriteCompactionRecordInput): Promise<boolean> {
  if (input.windowOf === undefined || input.lineage) return false;
  const latest = await latestCompactionEntryId(ctx.db, input.agentId, input.sessionId);
  if (latest === input.windowOf || latest === input.compactionId) return false;
  // A retry of a write that landed before a later compaction: this one's entry stands.
  return !(await getEntry(ctx.db, input.agentId, input.sessionId, input.compactionId));
}

/**
 * The running turn's task, when this compaction summarizes it: the turn's user message, stored
 * before the first kept entry (or everything is summarized). Undefined outside a turn, or when the
 * message stays in the kept tail.
 */
async function summarizedTask(ctx: CompactionContext, input: WriteCompactionRecordInput): Promise<string | undefined> {
  if (!input.turnInProgress) return undefined;
  const { db } = ctx;
  const task = await getEntry(db, input.agentId, input.sessionId, input.turnInProgress.userEntryId);
  if (task?.type !== 'message') return undefined;
  if (input.firstKeptEntryId !== null) {
    const kept = await getEntry(db, input.agentId, input.sessionId, input.firstKeptEntryId);
    if (kept && Number(kept.seq) <= Number(task.seq)) return undefined;
  }
  const { message } = decodeEntryRowOf('message', task).payload;
  if (message.role !== 'user') return undefined;
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

/** A summary that would not make the context smaller: nothing is written, and the row says what it would have made. */
async function recordUnreclaimed(
  ctx: CompactionContext,
  input: WriteCompactionRecordInput,
  tokensAfter: number,
): Promise<WriteCompactionRecordResult> {
  await recordUnreclaimedCompaction(ctx.db, { ...input, now: new Date(input.now) });
  log.info('the summary would not make the context smaller; nothing was written', {
    compactionId: input.compactionId,
    tokensBefore: input.tokensBefore,
    tokensAfter,
  });
  return { entryId: null, inserted: false, tokensAfter };
}

/** A rerun that is not applied: its summary is kept on its row; returns the context it would make. */
export async function storeRerunSummaryStep(
  ctx: CompactionContext,
  input: StoreRerunSummaryInput,
): Promise<{ tokensAfter: number }> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  await storeRerunSummary(ctx.db, input.agentId, input.compactionId, input.summary);
  return { tokensAfter: summaryTokens(deps.estimate, input.compactionId, input.summary) + input.keptTokens };
}
