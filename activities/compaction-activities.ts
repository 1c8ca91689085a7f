import { summaryCharBudget } from '../src/compaction/summary-budget';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { agentSummarizer } from './compaction-summarizer';
import { loadEntryRange, PlannedEntryMissingError, toPlanEntries } from './compaction-entries';
import { getEntry, loadActiveEntries } from '../src/store/entries-repo';
import { createCompactionRow, getCompaction, markFailed, markSucceeded, writeCompactionRecord } from '../src/store/compactions-repo';
import { planCompaction } from '../src/compaction/plan-compaction';
import { identifierPolicyInstruction } from '../src/compaction/prompts';
import { serializeEntriesForSummary } from '../src/compaction/serialize-for-summary';
import type { IdentifierPolicy } from '../src/compaction/identifiers';
import { guardSummary } from '../src/compaction/quality-guard';
import { collectFacts, EXTRACTIVE_SUMMARY_HEADER, extractiveSummary } from '../src/compaction/extractive-summary';
import { CompactionHooks, type CompactionHookError } from '../src/compaction/hooks';
import type { CompactionOutcome, CompactionPlan, OversizedEntry, PlanEntry } from '../src/compaction/types';
import { summaryMessage } from '../src/context/active-context';
import type { CompactionEntry } from '../src/context/types';
import { toActivityFailure } from '../src/model/failures';
import { DEFAULTS } from '../src/config/defaults';
import { FailureTypes, type CompactionTriggerName } from '../src/protocol';
import { effectiveWindow, learnFromOverflow } from './model-window';
import { withSubagentsInFlight, withoutSubagentsInFlight } from '../src/compaction/subagents-in-flight';
import { liveChildren } from '../src/store/subagent-runs-repo';
import { logRedactions } from './model-call-report';

/** Compaction activities need the worker's deps, plus hooks when the application registers any. */
/** Kept as an alias: compaction activities need nothing beyond ActivityDeps. */
export type CompactionActivityDeps = ActivityDeps;

/** Identifies the session and the compaction on every call (and every log line). */
export interface CompactionRef {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly compactionId: string;
}

export interface RecordCompactionStartInput extends CompactionRef {
  readonly trigger: CompactionTriggerName;
  readonly retryOf: string | null;
  readonly workflowId: string;
  readonly now: string;
  /** What the memory flush before it did (`ran`, `skipped: …`, `failed: …`). */
  readonly memoryFlush?: string;
}

/** A compaction that an earlier run with the same id already recorded (the workflow returns it as is). */
export interface RecordedCompaction extends CompactionOutcome {
  /** True when the row already said so; false when only the entry was written (the run died before marking it). */
  readonly rowFinished: boolean;
}

export interface PlanCompactionInput extends CompactionRef {
  readonly contextWindowTokens: number;
  /** 0 or unset: hard checkpoint (the workflow resolves the trigger's default before calling). */
  readonly keepRecentTokens: number;
}

export interface PlanCompactionResult {
  /** Ids and numbers (oversized notes are one line each). */
  readonly plan: CompactionPlan;
  /** The last compaction's summary, re-distilled with the new entries (bounded by the summary cap). */
  readonly previousSummary?: string;
  /** `extractive` when no model is configured for summaries. */
  readonly summarizer: 'model' | 'extractive';
}

/** A planned range of entries, named by its first and last entry. */
export interface EntryRange {
  readonly firstEntryId: string;
  readonly lastEntryId: string;
}

export interface SummarizeChunkInput extends CompactionRef, EntryRange {
  readonly mode: 'full' | 'withoutOversized';
  readonly oversized: readonly OversizedEntry[];
  readonly previousSummary?: string;
  readonly instructions: string;
}

export interface SummarizeTextInput extends CompactionRef {
  /** Partial summaries to merge (bounded by the summary cap each). */
  readonly text: string;
  readonly previousSummary?: string;
  readonly instructions: string;
}

export interface ReviseSummaryInput extends CompactionRef {
  readonly summary: string;
  /** Identifiers the summary lost. */
  readonly missing: readonly string[];
  readonly identifierPolicy: IdentifierPolicy;
}

export interface GuardSummaryInput extends CompactionRef, EntryRange {
  readonly summary: string;
  readonly previousSummary?: string;
  readonly identifierPolicy: IdentifierPolicy;
}

export interface GuardSummaryResult {
  /** The summary with still-missing identifiers appended and the cap applied. */
  readonly summary: string;
  readonly missing: string[];
  readonly blank: boolean;
}

export interface ExtractiveSummaryInput extends CompactionRef, EntryRange {
  readonly previousSummary?: string;
  readonly identifierPolicy: IdentifierPolicy;
}

export interface WriteCompactionRecordInput extends CompactionRef {
  readonly summary: string;
  readonly firstKeptEntryId: string | null;
  readonly tokensBefore: number;
  /** Estimated tokens of the kept tail (from the plan). */
  readonly keptTokens: number;
  readonly now: string;
}

export interface WriteCompactionRecordResult {
  readonly entryId: string;
  readonly inserted: boolean;
  readonly tokensAfter: number;
}

export interface FinishCompactionInput extends CompactionRef, CompactionOutcome {
  readonly trigger: CompactionTriggerName;
  readonly now: string;
}

export interface FailCompactionInput extends CompactionRef {
  readonly error: string;
  readonly now: string;
}

/**
 * The compaction workflow's activities: each reads what it needs from the database by id (the
 * workflow passes ids, ranges and summaries, never the transcript), calls a pure function or the
 * summarizer model, and writes idempotently.
 */
export function createCompactionActivities(allDeps: CompactionActivityDeps) {
  const { db } = allDeps;
  const hooks = allDeps.compactionHooks ?? new CompactionHooks();
  // Each agent compacts with its own models and window (inputs carry the agentId).
  const forAgent = (ref: CompactionRef) => {
    const deps = depsForAgent(allDeps, ref.agentId);
    return { deps, summarizer: agentSummarizer(deps) };
  };

  const logHookErrors = (ref: CompactionRef, errors: CompactionHookError[]) => {
    for (const e of errors) {
      log.warn('compaction hook failed', { hook: e.hook, sessionKey: ref.sessionKey, compactionId: ref.compactionId, error: String(e.error) });
    }
  };

  async function readRange(ref: CompactionRef, range: EntryRange): Promise<PlanEntry[]> {
    try {
      return await loadEntryRange(db, ref.agentId, ref.sessionId, range.firstEntryId, range.lastEntryId);
    } catch (err) {
      if (err instanceof PlannedEntryMissingError) throw ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
      throw err;
    }
  }

  /**
   * Records the `compactions` row as running (idempotent by id) and fires `before_compaction` once.
   * When a run with this compaction id already recorded it, returns that record instead.
   */
  async function recordCompactionStart(input: RecordCompactionStartInput): Promise<{ recorded?: RecordedCompaction }> {
    const recorded = await findRecorded(input);
    if (recorded) return { recorded };
    const firstAttempt = Context.current().info.attempt === 1;
    await createCompactionRow(db, {
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
    });
    if (firstAttempt) logHookErrors(input, await hooks.emit('before_compaction', { ...input }));
    return {};
  }

  /** The finished row, or the compaction entry of this id when a run died between writing it and marking the row. */
  async function findRecorded(input: CompactionRef): Promise<RecordedCompaction | undefined> {
    const row = await getCompaction(db, input.agentId, input.compactionId);
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
    const stored = await getEntry(db, input.agentId, input.sessionId, input.compactionId);
    if (stored?.type !== 'compaction') return undefined;
    const entry = stored.payload as unknown as CompactionEntry;
    const active = await loadActiveEntries(db, input.agentId, input.sessionId);
    const kept = active.compaction?.id === entry.id ? active.rows.reduce((sum, r) => sum + (r.token_estimate ?? 0), 0) : 0;
    return {
      status: 'succeeded',
      degraded: entry.summary.startsWith(EXTRACTIVE_SUMMARY_HEADER),
      tokensBefore: entry.tokensBefore,
      tokensAfter: depsForAgent(allDeps, input.agentId).estimate(summaryMessage(entry)) + kept,
      firstKeptEntryId: entry.firstKeptEntryId,
      entryId: entry.id,
      rowFinished: false,
    };
  }

  /** Loads the active window (since the last compaction's firstKeptEntryId) and plans it with the real estimator. */
  async function planCompactionStep(input: PlanCompactionInput): Promise<PlanCompactionResult> {
    const { deps, summarizer } = forAgent(input);
    const hasSummarizer = summarizer.available;
    const active = await loadActiveEntries(db, input.agentId, input.sessionId);
    // The last list of subagents in flight is stale by now: the record step writes the current one.
    const previousSummary = active.compaction ? withoutSubagentsInFlight(active.compaction.summary) : undefined;
    // Chunks and the kept tail fit what the provider really takes, not only what Keel was told.
    const window = Math.min(input.contextWindowTokens, hasSummarizer ? await summarizer.window() : await effectiveWindow(deps, deps.config.model));
    const keepRecentTokens = Math.min(input.keepRecentTokens, Math.floor(window * DEFAULTS.keepRecentMaxWindowShare));
    const plan = planCompaction(toPlanEntries(active.rows), {
      contextWindow: window,
      keepRecentTokens,
      estimate: deps.estimate,
      ...(previousSummary ? { previousSummary } : {}),
    });
    return { plan, ...(previousSummary ? { previousSummary } : {}), summarizer: hasSummarizer ? 'model' : 'extractive' };
  }

  /** Summarizes one planned chunk, read from the database by its entry range. */
  async function summarizeChunk(input: SummarizeChunkInput): Promise<string> {
    const entries = await readRange(input, input);
    const text = serializeEntriesForSummary(entries, input.oversized, input.mode);
    return forAgent(input).summarizer.summarizeFitting(text, input.previousSummary, input.instructions);
  }

  /** Summarizes a given text: the merge of labelled partial summaries. */
  async function summarizeText(input: SummarizeTextInput): Promise<string> {
    return forAgent(input).summarizer.summarizeFitting(input.text, input.previousSummary, input.instructions);
  }

  /** The quality guard's one summarizer retry: rewrite the summary keeping the listed identifiers verbatim. */
  async function reviseSummary(input: ReviseSummaryInput): Promise<string> {
    const { deps, summarizer } = forAgent(input);
    const instructions = [
      'The summary above lost identifiers. Rewrite it, keeping its structure and content, so that each of these appears verbatim:',
      input.missing.map((id) => `- ${id}`).join('\n'),
      identifierPolicyInstruction(input.identifierPolicy),
    ]
      .filter(Boolean)
      .join('\n\n');
    const prompt = `<summary>\n${input.summary}\n</summary>\n\n${instructions}`;
    try {
      return await summarizer.call(prompt);
    } catch (err) {
      await learnFromOverflow(deps, summarizer.modelName, err, summarizer.countTokens(prompt)).catch(() => undefined);
      throw toActivityFailure(err);
    }
  }

  /**
   * Checks the summary keeps the protected identifiers of the summarized entries and of the previous
   * summary, appends the missing ones in "Preserved identifiers", and caps it.
   */
  async function guardSummaryStep(input: GuardSummaryInput): Promise<GuardSummaryResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const entries = await readRange(input, input);
    const messages = entries.map((e) => e.message);
    const facts = collectFacts(input.previousSummary, messages, input.identifierPolicy);
    const guarded = guardSummary(input.summary, facts.identifiers, summaryCharBudget(await effectiveWindow(deps, deps.config.model)), facts);
    if (guarded.addedSections.length) log.info('summary guard added sections the summarizer left out', { sections: guarded.addedSections });
    return { summary: guarded.summary, missing: guarded.appended, blank: guarded.blank };
  }

  /** The deterministic summary written when no model summary could be had (never "No prior history."). */
  async function extractiveSummaryStep(input: ExtractiveSummaryInput): Promise<string> {
    const deps = depsForAgent(allDeps, input.agentId);
    const entries = await readRange(input, input);
    return extractiveSummary({
      ...(input.previousSummary ? { previousSummary: input.previousSummary } : {}),
      messages: entries.map((e) => e.message),
      policy: input.identifierPolicy,
      maxChars: summaryCharBudget(await effectiveWindow(deps, deps.config.model)),
    });
  }

  /**
   * Writes the compaction entry and session counters in one transaction, once (deterministic entry id).
   * The summary gets the subagents still running, whichever summarizer wrote it, so the agent does
   * not spawn them again once the conversation that started them is gone.
   */
  async function writeCompactionRecordStep(input: WriteCompactionRecordInput): Promise<WriteCompactionRecordResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const entryId = input.compactionId;
    const summary = withSubagentsInFlight(input.summary, await liveChildren(db, input.agentId, input.sessionKey));
    const tokensWith = (text: string) =>
      deps.estimate(summaryMessage({ type: 'compaction', id: entryId, parentId: null, timestamp: input.now, summary: text, firstKeptEntryId: '', tokensBefore: 0 })) + input.keptTokens;
    const tokensAfter = tokensWith(summary);
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
    });
    logRedactions('compaction_summary', redactions, { compactionId: input.compactionId });
    if (inserted) return { entryId, inserted, tokensAfter };
    // An earlier attempt wrote the entry, with the runs in flight then: count what it stored.
    const stored = await getEntry(db, input.agentId, input.sessionId, entryId);
    const storedSummary = stored?.type === 'compaction' ? (stored.payload as unknown as CompactionEntry).summary : summary;
    return { entryId, inserted, tokensAfter: tokensWith(storedSummary) };
  }

  /** Marks the row succeeded (or skipped) and fires `after_compaction` when this call finished it. */
  async function finishCompaction(input: FinishCompactionInput): Promise<void> {
    const moved = await markSucceeded(db, {
      agentId: input.agentId,
      id: input.compactionId,
      status: input.status,
      degraded: input.degraded,
      tokensBefore: input.tokensBefore,
      tokensAfter: input.tokensAfter,
      firstKeptEntryId: input.firstKeptEntryId,
      entryId: input.entryId,
      now: new Date(input.now),
    });
    if (moved) {
      const outcome = input.degraded ? `${input.status}_degraded` : input.status;
      await logCompaction(input, outcome, { tokensBefore: input.tokensBefore, tokensAfter: input.tokensAfter });
      const { now: _now, ...event } = input;
      logHookErrors(input, await hooks.emit('after_compaction', event));
    }
  }

  /** Marks the row failed with the error and counts a consecutive failure on the session (once). */
  async function failCompaction(input: FailCompactionInput): Promise<void> {
    if (await markFailed(db, input.agentId, input.compactionId, input.error, new Date(input.now))) {
      await logCompaction(input, 'failed', { error: input.error });
    }
  }

  /** One `compaction` line and count per compaction, when this call moved its row (a retry logs nothing more). */
  async function logCompaction(input: CompactionRef & { now: string }, outcome: string, facts: Record<string, unknown>): Promise<void> {
    const row = await getCompaction(db, input.agentId, input.compactionId);
    const trigger = row?.trigger ?? 'unknown';
    allDeps.metrics?.compaction(trigger, outcome);
    const durationMs = row ? Date.parse(input.now) - new Date(row.started_at).getTime() : undefined;
    const line = { event: 'compaction', compactionId: input.compactionId, trigger, outcome, ...facts, durationMs };
    if (outcome === 'failed') log.warn('compaction', line);
    else log.info('compaction', line);
  }

  return {
    recordCompactionStart,
    planCompaction: planCompactionStep,
    summarizeChunk,
    summarizeText,
    reviseSummary,
    guardSummary: guardSummaryStep,
    extractiveSummary: extractiveSummaryStep,
    writeCompactionRecord: writeCompactionRecordStep,
    finishCompaction,
    failCompaction,
  };
}
