/**
 * A compaction's summary asked on the conversation's own prompt cache. The session's last model call
 * is rebuilt from the same inputs as the turn built it (the window before its reply, the system
 * prompt at that call's time, the session's tools, the same context pipeline), so its request is
 * byte-identical to what the turn sent; then come that call's reply and one user message asking for
 * the summary. Cache markers sit where the turn put them, and the provider bills the whole prefix as
 * a cache read instead of input. When anything makes the rebuilt request differ, the cache misses and
 * the call costs what today's prompt costs: a missed saving, never a wrong summary.
 */
import type { ActivityDeps } from '../../src/runtime/deps';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import type { SessionRow } from '../../src/store/schema';
import { prepareModelCall } from './prepare-model-call';
import { modelOf } from './session-model';
import { effectiveWindow } from './model-window';
import { summaryAfterConversationPrompt } from '../../src/compaction/prompts';
import { SUBAGENTS_IN_FLIGHT_HEADING } from '../../src/compaction/subagents-in-flight';
import type { AgentMessage, AssistantMessage } from '../../src/context/types';
import { isToolCallBlock } from '../../src/context/types';
import type { AgentSummarizer, SummaryRequest } from './compaction-summarizer';
import { log } from '@temporalio/activity';
import { isCancellation } from '../../src/compaction/summarize-with-fallback';

/** Characters of the first kept message the summary request quotes to say where the summary ends. */
const KEPT_FROM_QUOTE_CHARS = 160;

/** The compaction whose summary is asked: its session, its planned range and trigger, the chunk instructions. */
export interface SummaryOnCacheInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly firstEntryId: string;
  readonly lastEntryId: string;
  readonly previousSummary?: string;
  readonly instructions: string;
}

/** The request to send, or why the summary is asked with today's prompt instead. */
export type SummaryOnCache = { readonly request: SummaryRequest } | { readonly skipped: string };

/**
 * The summary request on the last call's prefix, when it applies: the summarizer is the session's own
 * chat model on the same client, the last call's reply ends the window and shows the provider caches
 * prompts, the range starts at the window's start, and the request fits the summarizer's window.
 */
export async function summaryOnPromptCache(
  deps: ActivityDeps,
  summarizer: AgentSummarizer,
  input: SummaryOnCacheInput,
): Promise<SummaryOnCache> {
  const session = await getSession(deps.db, input.agentId, input.sessionKey);
  const model = modelOf(deps, session);
  if (deps.compactionModel || summarizer.modelName !== model)
    return { skipped: 'the summarizer is not the session’s chat model' };
  const rows = (await loadActiveEntries(deps.db, input.agentId, input.sessionId)).rows.filter(
    (r) => r.type === 'message',
  );
  const last = rows[rows.length - 1]?.payload;
  const reply = last?.message.role === 'assistant' ? (last.message as AssistantMessage) : undefined;
  if (!last || !reply || reply.content.some((b) => isToolCallBlock(b)))
    return { skipped: 'the window does not end with a final reply' };
  if ((reply.usage?.cacheRead ?? 0) + (reply.usage?.cacheWrite ?? 0) === 0)
    return { skipped: 'the last reply shows no prompt cache' };
  if (rows[0]?.id !== input.firstEntryId) return { skipped: 'the range does not start at the window’s start' };

  // The last call as the turn made it: its time (the reply's), its model, the window before its reply,
  // and the session's context tokens as the turn read them (its spawn-policy level).
  const atTurnStart = session
    ? { session: { ...session, context_tokens: contextTokensAtTurnStart(session, rows) } }
    : {};
  const turnWindow = await effectiveWindow(deps, model, { agentId: input.agentId, sessionKey: input.sessionKey });
  const prepared = await prepareModelCall(deps, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    now: last.timestamp,
    model,
    window: turnWindow,
    ...atTurnStart,
    beforeEntryId: last.id,
  });
  if (prepared.context.contextManagement || prepared.context.providerCompaction)
    return { skipped: 'the last call used the provider’s context management' };
  const keptIndex = rows.findIndex((r) => r.id === input.lastEntryId) + 1;
  const kept = keptIndex > 0 && keptIndex < rows.length ? rows[keptIndex]!.payload.message : undefined;
  const prompt = summaryAfterConversationPrompt(input.instructions, {
    ...(kept ? { keptFrom: openingWords(kept) } : {}),
    redistill: Boolean(input.previousSummary?.trim()),
    // The turn's summary message still lists the subagents running at the last compaction.
    staleSubagents: JSON.stringify(prepared.context.messages[0]?.content ?? '').includes(SUBAGENTS_IN_FLIGHT_HEADING),
  });
  const ask: AgentMessage = { role: 'user', content: prompt };
  const messages = [...prepared.context.messages, reply, ask];
  const window = await summarizer.window();
  const promptTokens = prepared.contextTokens + deps.estimate(reply) + deps.estimate(ask);
  if (promptTokens + summarizer.outputTokens(window) > window)
    return { skipped: 'the history does not fit the summarizer’s window' };
  return {
    request: {
      system: prepared.system,
      tools: prepared.tools,
      messages,
      promptCaching: deps.config.promptCaching,
      cachedPrefixMessages: prepared.context.messages.length,
    },
  };
}

/**
 * The session's context tokens when its last turn began, which set the spawn-policy level of that
 * turn's system prompt: the row's count now less the turn's own entries (its user message, tool
 * rounds and reply). An estimate: when the turn crossed a level boundary by a hair, the other level
 * may come out, and the cache then misses from the system prompt on (today's cost, same summary).
 */
function contextTokensAtTurnStart(
  session: SessionRow,
  rows: ReadonlyArray<{ role: string | null; token_estimate: number | null }>,
): number {
  const turnStart = rows.map((r) => r.role).lastIndexOf('user');
  const turnTokens = rows.slice(Math.max(0, turnStart)).reduce((sum, r) => sum + (r.token_estimate ?? 0), 0);
  return Math.max(0, Number(session.context_tokens) - turnTokens);
}

/** The first words of a message's text, on one line (quoted to mark where the summary ends). */
function openingWords(message: AgentMessage): string {
  const text =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '')).join(' ');
  const line = text.replace(/\s+/g, ' ').replace(/"/g, "'").trim();
  return line.length > KEPT_FROM_QUOTE_CHARS ? `${line.slice(0, KEPT_FROM_QUOTE_CHARS)}…` : line;
}

/**
 * The summary asked on the last call's prefix, or undefined when that does not apply or the call
 * failed (the caller then asks with today's prompt, which also learns from an overflow, and meets a
 * spend limit reached meanwhile as its fallback chain does). A cancellation propagates.
 */
export async function summarizeOnPromptCache(
  deps: ActivityDeps,
  summarizer: AgentSummarizer,
  input: SummaryOnCacheInput,
): Promise<string | undefined> {
  const found = await summaryOnPromptCache(deps, summarizer, input);
  if ('skipped' in found) {
    log.info('summary asked with the summarizer prompt, not on the prompt cache', {
      sessionKey: input.sessionKey,
      reason: found.skipped,
    });
    return undefined;
  }
  try {
    const summary = await summarizer.callRequest(found.request);
    if (summary !== '') return summary;
    log.warn('the summary asked on the prompt cache came back empty; asking with the summarizer prompt', {
      sessionKey: input.sessionKey,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('the summary asked on the prompt cache failed; asking with the summarizer prompt', {
      sessionKey: input.sessionKey,
      error: String(err),
    });
  }
  return undefined;
}
