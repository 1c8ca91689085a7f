import { summaryCharBudget } from '../src/compaction/summary-budget';
import { identifierCharBudget } from '../src/compaction/identifier-budget';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { agentSummarizer, type SummarizerSpendGuard } from './parts/compaction-summarizer';
import { ReceivedReplies } from './parts/received-replies';
import { summarizeOnPromptCache } from './parts/summary-on-prompt-cache';
import { loadEntryRange, PlannedEntryMissingError, planMessageOf, toPlanEntries } from './parts/compaction-entries';
import { getEntry, loadActiveEntries, MESSAGE_TYPES } from '../src/store/entries-repo';
import { decodeEntryRows } from '../src/store/entry-row';
import {
  addSummarizerSpend,
  createCompactionRow,
  getCompaction,
  markFailed,
  markSpendLimited,
  markSucceeded,
  recordUnreclaimedCompaction,
  storeRerunSummary,
  summarizerSpendSince,
  writeCompactionRecord,
  writeRevertRecord,
} from '../src/store/compactions-repo';
import { CompactionEditError, planRerun, planRevert } from '../src/store/compaction-lineage';
import { getSession } from '../src/store/sessions-repo';
import { spendLimited, spendLimitReason, summarizerSpendLimits } from '../src/compaction/summarizer-spend';
import { keptTailTokens } from '../src/compaction/kept-tail';
import { planCompaction } from '../src/compaction/plan-compaction';
import { identifierPolicyInstruction } from '../src/compaction/prompts';
import { serializeEntriesForSummary } from '../src/compaction/serialize-for-summary';
import type { IdentifierPolicy } from '../src/compaction/identifiers';
import { guardSummary } from '../src/compaction/quality-guard';
import { collectFacts, EXTRACTIVE_SUMMARY_HEADER, extractiveSummary } from '../src/compaction/extractive-summary';
import { CompactionHooks, type CompactionHookError } from '../src/compaction/hooks';
import type { CompactionOutcome, CompactionPlan, OversizedEntry, PlanEntry } from '../src/compaction/types';
import { summaryMessage } from '../src/context/active-context';
import { toActivityFailure } from '../src/model/failures';
import { FailureTypes, type CompactionTriggerName } from '../src/protocol';
import { effectiveWindow, learnFromOverflow } from './parts/model-window';
import { withSubagentsInFlight, withoutSubagentsInFlight } from '../src/compaction/subagents-in-flight';
import { liveChildren } from '../src/store/subagent-runs-repo';
import { logRedactions } from './parts/model-call-report';

/** Compaction activities need the worker's deps, plus hooks when the application registers any. */
/** Kept as an alias: compaction activities need nothing beyond ActivityDeps. */
export type CompactionActivityDeps = ActivityDeps;

/** Identifies the session and the compaction on every call (and every log line). */
export interface CompactionRef {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly compactionId: string;
  /** Another model than the agent's summarizer (`keel compactions rerun --model`). */
  readonly summarizerModel?: string;
}

export interface RecordCompactionStartInput extends CompactionRef {
  readonly trigger: CompactionTriggerName;
  readonly retryOf: string | null;
  readonly workflowId: string;
  readonly now: string;
  /** What the memory flush before it did (`ran`, `skipped: …`, `failed: …`). */
  readonly memoryFlush?: string;
  readonly revertOf?: string;
  readonly rerunOf?: string;
}

/** A compaction that an earlier run with the same id already recorded (the workflow returns it as is). */
export interface RecordedCompaction extends CompactionOutcome {
  /** True when the row already said so; false when only the entry was written (the run died before marking it). */
  readonly rowFinished: boolean;
}

export interface PlanCompactionInput extends CompactionRef {
  readonly contextWindowTokens: number;
  readonly trigger: CompactionTriggerName;
  /** The recent tail asked for; unset: the trigger's default (`keptTailTokens`). 0: a hard checkpoint. */
  readonly keepRecentTokens?: number;
}

export interface PlanCompactionResult {
  /** Ids and numbers (oversized notes are one line each). */
  readonly plan: CompactionPlan;
  /** The last compaction's summary, re-distilled with the new entries (bounded by the summary cap). */
  readonly previousSummary?: string;
  /** `extractive` when no model is configured for summaries, or the summarizer spend limit is reached. */
  readonly summarizer: 'model' | 'extractive';
}

export interface PlanRerunInput extends CompactionRef {
  readonly rerunOf: string;
  readonly apply: boolean;
  readonly contextWindowTokens: number;
}

export interface PlanRerunResult extends PlanCompactionResult {
  /** The compaction entry whose range is summarized again (the applied rerun's `rangeOf`). */
  readonly rangeOf: string;
}

export interface RevertCompactionInput extends CompactionRef {
  readonly revertOf: string;
  readonly now: string;
}

export interface StoreRerunSummaryInput extends CompactionRef {
  readonly summary: string;
  /** Tokens of the tail the original kept (what the context would be with this summary). */
  readonly keptTokens: number;
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

export interface SummarizeOnCacheInput extends CompactionRef, EntryRange {
  readonly previousSummary?: string;
  /** The chunk instructions (`chunkSummaryInstructions`): the same sections and rules as a chunk's summary. */
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
  /** Decisions and instructions (`[time] speaker: statement`) the summary did not quote. */
  readonly unkept?: readonly string[];
  readonly identifierPolicy: IdentifierPolicy;
}

/** The plan's estimate of the summarized messages: the summary's budget grows with it (absent in older histories). */
interface SummaryBudgetInput {
  readonly summarizedTokens?: number;
}

export interface GuardSummaryInput extends CompactionRef, EntryRange, SummaryBudgetInput {
  readonly summary: string;
  readonly previousSummary?: string;
  readonly identifierPolicy: IdentifierPolicy;
}

export interface GuardSummaryResult {
  /** The summary with still-missing identifiers appended and the cap applied. */
  readonly summary: string;
  readonly missing: string[];
  /** Decisions and instructions the summary did not quote (the guard added them); absent in results recorded before it existed. */
  readonly unkept?: string[];
  readonly blank: boolean;
}

export interface ExtractiveSummaryInput extends CompactionRef, EntryRange, SummaryBudgetInput {
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
  /** An applied rerun: the compaction it summarized again and the entry whose range it covers. */
  readonly lineage?: { readonly rerunOf: string; readonly rangeOf: string };
  /** The session's system prompt, workspace files and tools (`CompactionWorkflowInput.promptOverheadTokens`). */
  readonly promptOverheadTokens?: number;
}

export interface WriteCompactionRecordResult {
  /** Null: nothing written, because the summary and the kept tail would not be smaller than what they replace. */
  readonly entryId: string | null;
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
 * summarizer model, and writes idempotently. `replies`: the worker's memo of replies received and
 * not stored yet (a summarizer retry reuses them).
 */
export function createCompactionActivities(allDeps: CompactionActivityDeps, replies = new ReceivedReplies()) {
  const { db } = allDeps;
  const hooks = allDeps.compactionHooks ?? new CompactionHooks();
  // Each agent compacts with its own models and window (inputs carry the agentId).
  const forAgent = (ref: CompactionRef) => {
    const deps = depsForAgent(allDeps, ref.agentId);
    return {
      deps,
      summarizer: agentSummarizer(deps, {
        ...(ref.summarizerModel ? { model: ref.summarizerModel } : {}),
        spend: spendGuard(deps, ref),
        session: ref,
        replies,
      }),
    };
  };

  /** Why this compaction may not call the summarizer (spend limit reached), recorded on its row and logged once per step. */
  async function spendRefusal(deps: ActivityDeps, ref: CompactionRef): Promise<string | undefined> {
    const limits = summarizerSpendLimits(deps.config);
    if (!spendLimited(limits)) return undefined;
    const since = new Date(Date.now() - limits.windowMinutes * 60_000);
    const reason = spendLimitReason(await summarizerSpendSince(db, ref.agentId, ref.sessionKey, since), limits);
    if (reason) {
      await markSpendLimited(db, ref.agentId, ref.compactionId, reason);
      log.warn('summarizer spend limit reached; the compaction writes the extractive summary', {
        sessionKey: ref.sessionKey,
        compactionId: ref.compactionId,
        reason,
      });
    }
    return reason;
  }

  /** Each summarizer call is checked against the spend limit first and counted on the row after. */
  const spendGuard = (deps: ActivityDeps, ref: CompactionRef): SummarizerSpendGuard => ({
    beforeCall: async () => {
      const reason = await spendRefusal(deps, ref);
      if (reason) throw ApplicationFailure.nonRetryable(reason, FailureTypes.SummarizerSpendLimited);
    },
    afterCall: (billing, model) => addSummarizerSpend(db, ref.agentId, ref.compactionId, billing, model),
  });

  const logHookErrors = (ref: CompactionRef, errors: CompactionHookError[]) => {
    for (const e of errors) {
      log.warn('compaction hook failed', {
        hook: e.hook,
        sessionKey: ref.sessionKey,
        compactionId: ref.compactionId,
        error: String(e.error),
      });
    }
  };

  async function readRange(ref: CompactionRef, range: EntryRange): Promise<PlanEntry[]> {
    try {
      return await loadEntryRange(db, ref.agentId, ref.sessionId, range.firstEntryId, range.lastEntryId);
    } catch (err) {
      if (err instanceof PlannedEntryMissingError)
        throw ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
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
      revertOf: input.revertOf ?? null,
      rerunOf: input.rerunOf ?? null,
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
    const entry = stored.payload;
    const active = await loadActiveEntries(db, input.agentId, input.sessionId);
    const kept =
      active.compaction?.id === entry.id ? active.rows.reduce((sum, r) => sum + (r.token_estimate ?? 0), 0) : 0;
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
    const hasSummarizer = summarizer.available && !(await spendRefusal(deps, input));
    const active = await loadActiveEntries(db, input.agentId, input.sessionId);
    // The last list of subagents in flight is stale by now: the record step writes the current one.
    const previousSummary = active.compaction ? withoutSubagentsInFlight(active.compaction.summary) : undefined;
    // Chunks and the kept tail fit what the provider really takes, not only what Keel was told.
    const window = Math.min(
      input.contextWindowTokens,
      hasSummarizer ? await summarizer.window() : await effectiveWindow(deps, deps.config.model, input),
    );
    const plan = planCompaction(toPlanEntries(active.rows), {
      contextWindow: window,
      keepRecentTokens: keptTailTokens(input.keepRecentTokens, input.trigger, window),
      estimate: deps.estimate,
      ...(previousSummary ? { previousSummary } : {}),
    });
    return {
      plan,
      ...(previousSummary ? { previousSummary } : {}),
      summarizer: hasSummarizer ? 'model' : 'extractive',
    };
  }

  /** Summarizes one planned chunk, read from the database by its entry range. */
  async function summarizeChunk(input: SummarizeChunkInput): Promise<string> {
    const entries = await readRange(input, input);
    const text = serializeEntriesForSummary(entries, input.oversized, input.mode);
    return forAgent(input).summarizer.summarizeFitting(text, input.previousSummary, input.instructions);
  }

  /**
   * The summary of the whole planned range asked on the conversation's own prompt cache (see
   * summary-on-prompt-cache.ts); `{}` when the configuration, the summarizer or the session's last
   * call rule it out, or the call failed: the workflow then summarizes the planned chunks.
   */
  async function summarizeOnCache(input: SummarizeOnCacheInput): Promise<{ summary?: string }> {
    const { deps, summarizer } = forAgent(input);
    if (!deps.config.compactionPromptCache || input.summarizerModel) return {};
    const summary = await summarizeOnPromptCache(deps, summarizer, input);
    return summary === undefined ? {} : { summary };
  }

  /** Summarizes a given text: the merge of labelled partial summaries. */
  async function summarizeText(input: SummarizeTextInput): Promise<string> {
    return forAgent(input).summarizer.summarizeFitting(input.text, input.previousSummary, input.instructions);
  }

  /** The quality guard's one summarizer retry: rewrite the summary keeping the listed identifiers and statements verbatim. */
  async function reviseSummary(input: ReviseSummaryInput): Promise<string> {
    const { deps, summarizer } = forAgent(input);
    const unkept = input.unkept ?? [];
    const instructions = [
      input.missing.length
        ? 'The summary above lost identifiers. Rewrite it, keeping its structure and content, so that each of these appears verbatim:'
        : '',
      input.missing.map((id) => `- ${id}`).join('\n'),
      unkept.length
        ? `${input.missing.length ? 'Also quote' : 'The summary above lost decisions and instructions. Rewrite it, keeping its structure and content, quoting'} each of these word for word with its time, under "## Decisions" or "## Instructions and preferences":`
        : '',
      unkept.map((line) => `- ${line}`).join('\n'),
      identifierPolicyInstruction(input.identifierPolicy),
    ]
      .filter(Boolean)
      .join('\n\n');
    const prompt = `<summary>\n${input.summary}\n</summary>\n\n${instructions}`;
    try {
      return await summarizer.call(prompt);
    } catch (err) {
      await learnFromOverflow(deps, summarizer.modelName, err, summarizer.countTokens(prompt), input).catch(
        () => undefined,
      );
      throw toActivityFailure(err);
    }
  }

  /**
   * Checks the summary keeps the protected identifiers of the summarized entries and of the previous
   * summary (the newest that fit the window's identifier budget), appends the missing ones in
   * "Preserved identifiers", and caps it.
   */
  async function guardSummaryStep(input: GuardSummaryInput): Promise<GuardSummaryResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const entries = await readRange(input, input);
    const messages = entries.map((e) => e.message);
    const facts = collectFacts(input.previousSummary, messages, input.identifierPolicy);
    const window = await effectiveWindow(deps, deps.config.model, input);
    const guarded = guardSummary(
      input.summary,
      facts.identifiers,
      budgetOf(deps, window, input),
      facts,
      identifierCharBudget(window),
    );
    if (guarded.addedSections.length)
      log.info('summary guard added sections the summarizer left out', { sections: guarded.addedSections });
    return { summary: guarded.summary, missing: guarded.appended, unkept: guarded.unkept, blank: guarded.blank };
  }

  /** The deterministic summary written when no model summary could be had (never "No prior history."). */
  async function extractiveSummaryStep(input: ExtractiveSummaryInput): Promise<string> {
    const deps = depsForAgent(allDeps, input.agentId);
    const entries = await readRange(input, input);
    const window = await effectiveWindow(deps, deps.config.model, input);
    return extractiveSummary({
      ...(input.previousSummary ? { previousSummary: input.previousSummary } : {}),
      messages: entries.map((e) => e.message),
      policy: input.identifierPolicy,
      maxChars: budgetOf(deps, window, input),
      maxIdentifierChars: identifierCharBudget(window),
    });
  }

  /** The summary's budget: grown with what it replaces when the workflow says, within the agent's window share (see summaryCharBudget). */
  function budgetOf(
    deps: ActivityDeps,
    window: number,
    input: SummaryBudgetInput & { previousSummary?: string },
  ): number {
    const replaced =
      input.summarizedTokens === undefined
        ? undefined
        : { summarizedTokens: input.summarizedTokens, previousSummaryChars: input.previousSummary?.length ?? 0 };
    return summaryCharBudget(window, replaced, deps.config.summaryMaxWindowShare);
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
      deps.estimate(
        summaryMessage({
          type: 'compaction',
          id: entryId,
          parentId: null,
          timestamp: input.now,
          summary: text,
          firstKeptEntryId: '',
          tokensBefore: 0,
        }),
      ) + input.keptTokens;
    const tokensAfter = tokensWith(summary);
    // No compaction succeeds without reclaiming tokens (OpenClaw's issues: "compaction reports success
    // but reclaims nothing"), whoever asked: a summary no smaller than what it replaces is not written,
    // and the storm hold learns it. An operator's rerun applied to an earlier range is theirs to judge.
    if (
      !input.lineage &&
      tokensAfter >= input.tokensBefore &&
      !(await getEntry(db, input.agentId, input.sessionId, entryId))
    ) {
      await recordUnreclaimedCompaction(db, { ...input, now: new Date(input.now) });
      log.info('the summary would not make the context smaller; nothing was written', {
        compactionId: input.compactionId,
        tokensBefore: input.tokensBefore,
        tokensAfter,
      });
      return { entryId: null, inserted: false, tokensAfter };
    }
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

  /** A compaction edit that cannot be done fails its workflow at once, with the reason (retrying cannot fix it). */
  async function editing<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof CompactionEditError)
        throw ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
      throw err;
    }
  }

  /** Plans summarizing an earlier compaction's range again (`keel compactions rerun`), like `planCompaction` plans the window. */
  async function planRerunStep(input: PlanRerunInput): Promise<PlanRerunResult> {
    const target = await editing(() => planRerun(db, input.agentId, input.rerunOf));
    if (input.apply && !target.active) {
      throw ApplicationFailure.nonRetryable(
        `compaction ${input.rerunOf}'s range is not the session's window now (a later compaction or a revert replaced it); a rerun of it can be recorded but not applied`,
        FailureTypes.InvalidInput,
      );
    }
    const { deps, summarizer } = forAgent(input);
    const hasSummarizer = summarizer.available && !(await spendRefusal(deps, input));
    const entries = await readRange(input, target.range);
    const window = Math.min(
      input.contextWindowTokens,
      hasSummarizer ? await summarizer.window() : await effectiveWindow(deps, deps.config.model, input),
    );
    const previousSummary = target.previousSummary ? withoutSubagentsInFlight(target.previousSummary) : undefined;
    // The whole range is summarized (nothing of it kept); the tail the original kept stays kept.
    const plan = planCompaction(entries, {
      contextWindow: window,
      keepRecentTokens: 0,
      estimate: deps.estimate,
      ...(previousSummary ? { previousSummary } : {}),
    });
    const active = await loadActiveEntries(db, input.agentId, input.sessionId);
    const keptTokens = target.active ? active.rows.reduce((sum, r) => sum + (r.token_estimate ?? 0), 0) : 0;
    const session = await getSession(db, input.agentId, input.sessionKey);
    return {
      plan: {
        ...plan,
        firstKeptEntryId: target.firstKeptEntryId,
        keptTokens,
        tokensBefore: session?.context_tokens ?? plan.tokensBefore,
      },
      ...(previousSummary ? { previousSummary } : {}),
      summarizer: hasSummarizer ? 'model' : 'extractive',
      rangeOf: target.rangeOf,
    };
  }

  /** A rerun that is not applied: its summary is kept on its row; returns the context it would make. */
  async function storeRerunSummaryStep(input: StoreRerunSummaryInput): Promise<{ tokensAfter: number }> {
    const deps = depsForAgent(allDeps, input.agentId);
    await storeRerunSummary(db, input.agentId, input.compactionId, input.summary);
    const tokens = deps.estimate(
      summaryMessage({
        type: 'compaction',
        id: input.compactionId,
        parentId: null,
        timestamp: '',
        summary: input.summary,
        firstKeptEntryId: '',
        tokensBefore: 0,
      }),
    );
    return { tokensAfter: tokens + input.keptTokens };
  }

  /**
   * `keel compactions revert`: appends the entry that restores the window from before the compaction
   * (resolved here, inside the session's one compaction run, so nothing moved in between) and sets
   * the session's context tokens, once.
   */
  async function revertCompactionStep(input: RevertCompactionInput): Promise<CompactionOutcome> {
    const deps = depsForAgent(allDeps, input.agentId);
    const stored = await getEntry(db, input.agentId, input.sessionId, input.compactionId);
    const storedEntry = stored?.type === 'compaction' ? stored.payload : undefined;
    const revert = storedEntry ? undefined : await editing(() => planRevert(db, input.agentId, input.revertOf));
    const restored = revert?.restored ?? storedEntry!;
    // Both measured alike (summary + messages, as a compaction's tokens after): the window now, and the restored one.
    const tokensBefore = revert ? await activeWindowTokens(deps, input) : storedEntry!.tokensBefore;
    const tokensAfter = await windowTokens(deps, input, restored);
    if (revert) {
      await writeRevertRecord(db, {
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
  async function activeWindowTokens(deps: ActivityDeps, ref: CompactionRef): Promise<number> {
    const active = await loadActiveEntries(db, ref.agentId, ref.sessionId);
    let tokens = active.compaction ? deps.estimate(summaryMessage(active.compaction)) : 0;
    for (const r of active.rows) {
      const message = planMessageOf(r);
      if (message) tokens += r.token_estimate ?? deps.estimate(message);
    }
    return tokens;
  }

  /** Estimated tokens of a window: its summary message (when it has one) and the message entries from its first kept entry on. */
  async function windowTokens(
    deps: ActivityDeps,
    ref: CompactionRef,
    window: { summary: string; firstKeptEntryId: string },
  ): Promise<number> {
    const first = await getEntry(db, ref.agentId, ref.sessionId, window.firstKeptEntryId);
    const rows = await db
      .selectFrom('transcript_entries')
      .select(['agent_id', 'session_id', 'id', 'type', 'payload', 'token_estimate'])
      .where('agent_id', '=', ref.agentId)
      .where('session_id', '=', ref.sessionId)
      .where('seq', '>=', Number(first?.seq ?? Number.MAX_SAFE_INTEGER))
      .where('type', 'in', MESSAGE_TYPES)
      .execute();
    let tokens = window.summary
      ? deps.estimate(
          summaryMessage({
            type: 'compaction',
            id: ref.compactionId,
            parentId: null,
            timestamp: '',
            summary: window.summary,
            firstKeptEntryId: '',
            tokensBefore: 0,
          }),
        )
      : 0;
    for (const r of decodeEntryRows(rows)) {
      const message = planMessageOf(r);
      tokens += r.token_estimate ?? (message ? deps.estimate(message) : 0);
    }
    return tokens;
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
  async function logCompaction(
    input: CompactionRef & { now: string },
    outcome: string,
    facts: Record<string, unknown>,
  ): Promise<void> {
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
    summarizeOnCache,
    summarizeText,
    reviseSummary,
    guardSummary: guardSummaryStep,
    extractiveSummary: extractiveSummaryStep,
    writeCompactionRecord: writeCompactionRecordStep,
    planRerun: planRerunStep,
    storeRerunSummary: storeRerunSummaryStep,
    revertCompaction: revertCompactionStep,
    finishCompaction,
    failCompaction,
  };
}
