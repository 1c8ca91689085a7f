/**
 * Records a compaction the provider did (Anthropic server compaction, paused after its block) as
 * Keel's own: a `compactions` row (trigger `native`), the compaction entry (a hard checkpoint: the
 * summary covers every message the call sent) and the session counters (the compaction's own token
 * usage among them, billed apart from the reply), once. The entry id is the
 * assistant entry id the workflow chose for the call, so a retried call finds it instead of calling
 * the model again.
 */
import { Context, log } from '@temporalio/activity';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { CompactionWorkflowResult } from '../../src/protocol';
import type { ModelUsage, ProviderCompaction } from '../../src/model/model-client';
import type { CompactionEntry } from '../../src/context/types';
import { summaryMessage } from '../../src/context/active-context';
import { providerCompactionDetails } from '../../src/context/provider-compaction';
import {
  createCompactionRow,
  getCompaction,
  markFailed,
  markSucceeded,
  writeCompactionRecord,
} from '../../src/store/compactions-repo';
import { redactSecrets } from '../../src/security/redact';
import { addSessionUsage } from '../../src/store/sessions-repo';
import { usageOfReply } from '../../src/turn/token-usage';
import type { CompactionHookError } from '../../src/compaction/hooks';

/** The trigger a provider-written compaction's row carries (`keel compactions` shows it). */
export const NATIVE_COMPACTION_TRIGGER = 'native';

export interface ProviderCompactionInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The call's assistant entry id: the compaction's id and entry id. */
  readonly assistantEntryId: string;
  readonly now: string;
  /** Keel's estimate of the context the provider compacted. */
  readonly tokensBefore: number;
  /** What the compaction itself used, as the provider reported it (not part of the reply's usage). */
  readonly usage?: ModelUsage;
}

/**
 * Writes the row, entry and counters for the provider's block. A block without a summary (the
 * provider's compaction failed) is recorded as a failed row; undefined tells the turn to compact
 * the Keel way instead.
 */
export async function recordProviderCompaction(
  deps: ActivityDeps,
  input: ProviderCompactionInput,
  block: ProviderCompaction,
): Promise<CompactionWorkflowResult | undefined> {
  const { db } = deps;
  const id = input.assistantEntryId;
  const now = new Date(input.now);
  const info = Context.current().info;
  await createCompactionRow(db, {
    id,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    trigger: NATIVE_COMPACTION_TRIGGER,
    workflowId: info.workflowExecution?.workflowId ?? null,
    retryOf: null,
    now,
    countAttempt: info.attempt === 1,
    memoryFlush: 'skipped: the provider compacted mid-call',
  });
  const ref = {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    compactionId: id,
    trigger: NATIVE_COMPACTION_TRIGGER,
  };
  if (info.attempt === 1) logHookErrors(id, await deps.compactionHooks?.emit('before_compaction', ref));
  const summary = block.summary?.trim() ? block.summary : undefined;
  const usage = input.usage ? usageOfReply(input.usage) : undefined;
  if (!summary) {
    if (
      await markFailed(
        db,
        input.agentId,
        id,
        'the provider returned a compaction block without a summary; Keel compacts instead',
        now,
      )
    ) {
      // A failed compaction is billed too.
      if (usage) await addSessionUsage(db, input, usage, now);
      deps.metrics?.compaction(NATIVE_COMPACTION_TRIGGER, 'failed');
      log.warn('compaction', {
        event: 'compaction',
        compactionId: id,
        trigger: NATIVE_COMPACTION_TRIGGER,
        outcome: 'failed',
      });
    }
    return undefined;
  }
  // The block goes back verbatim (it is signed); a summary the store must redact goes back as Keel's summary text instead.
  const verbatim = redactSecrets(summary).redactions.length === 0;
  const tokensAfter = summaryTokens(deps, id, summary, input.now);
  await writeCompactionRecord(db, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    entryId: id,
    summary,
    firstKeptEntryId: null,
    tokensBefore: input.tokensBefore,
    tokensAfter,
    now,
    ...(verbatim ? { details: providerCompactionDetails(block) } : {}),
    ...(usage ? { usage } : {}),
  });
  return finish(deps, input, { tokensBefore: input.tokensBefore, tokensAfter });
}

/** A retried call whose compaction entry is already written: the row finished, as the first attempt would have. */
export async function finishRecordedProviderCompaction(
  deps: ActivityDeps,
  input: Omit<ProviderCompactionInput, 'tokensBefore'>,
  entry: CompactionEntry,
): Promise<CompactionWorkflowResult> {
  const row = await getCompaction(deps.db, input.agentId, input.assistantEntryId);
  if (row?.status === 'succeeded')
    return outcome(input.assistantEntryId, {
      tokensBefore: row.tokens_before ?? entry.tokensBefore,
      tokensAfter: row.tokens_after ?? 0,
    });
  return finish(deps, input, {
    tokensBefore: entry.tokensBefore,
    tokensAfter: summaryTokens(deps, entry.id, entry.summary, input.now),
  });
}

async function finish(
  deps: ActivityDeps,
  input: Omit<ProviderCompactionInput, 'tokensBefore'>,
  tokens: { tokensBefore: number; tokensAfter: number },
): Promise<CompactionWorkflowResult> {
  const id = input.assistantEntryId;
  const result = outcome(id, tokens);
  const moved = await markSucceeded(deps.db, {
    agentId: input.agentId,
    id,
    status: 'succeeded',
    degraded: false,
    ...tokens,
    firstKeptEntryId: id,
    entryId: id,
    now: new Date(input.now),
  });
  if (moved) {
    deps.metrics?.compaction(NATIVE_COMPACTION_TRIGGER, 'succeeded');
    log.info('compaction', {
      event: 'compaction',
      compactionId: id,
      trigger: NATIVE_COMPACTION_TRIGGER,
      outcome: 'succeeded',
      ...tokens,
    });
    const event = {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      sessionId: input.sessionId,
      compactionId: id,
      trigger: NATIVE_COMPACTION_TRIGGER,
    };
    logHookErrors(
      id,
      await deps.compactionHooks?.emit('after_compaction', {
        ...event,
        status: 'succeeded',
        degraded: false,
        ...tokens,
        firstKeptEntryId: id,
        entryId: id,
      }),
    );
  }
  return result;
}

/** A throwing hook never fails the call; it is logged, as for Keel's own compactions. */
function logHookErrors(compactionId: string, errors: CompactionHookError[] | undefined): void {
  for (const e of errors ?? [])
    log.warn('compaction hook failed', { hook: e.hook, compactionId, error: String(e.error) });
}

function outcome(id: string, tokens: { tokensBefore: number; tokensAfter: number }): CompactionWorkflowResult {
  return { compactionId: id, status: 'succeeded', degraded: false, ...tokens, firstKeptEntryId: id, entryId: id };
}

function summaryTokens(deps: ActivityDeps, id: string, summary: string, now: string): number {
  return deps.estimate(
    summaryMessage({
      type: 'compaction',
      id,
      parentId: null,
      timestamp: now,
      summary,
      firstKeptEntryId: id,
      tokensBefore: 0,
    }),
  );
}
