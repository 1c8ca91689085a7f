import type { ActivityDeps } from '../../src/runtime/deps';
import { setTokenEstimates } from '../../src/store/entries-repo';
import {
  ActiveWindowCache,
  type ActiveWindow,
  type WindowEntry,
  type WindowLoad,
} from '../../src/store/active-window-cache';
import { IncrementalPipeline } from '../../src/context/incremental-pipeline';
import { TokenCache } from '../../src/context/estimate-tokens';
import { activeMessages } from '../../src/context/active-context';
import type { ContextPipelineReport } from '../../src/context/pipeline';
import { resolveHistoryLimit } from '../../src/context/limit-history-turns';
import { reserveForWindow } from '../../src/context/context-window';
import type { AgentMessage, CompactionEntry } from '../../src/context/types';
import type { AssembleReport } from '../../src/engine/types';
import type { ContextEngineSlot, StoredMessage } from '../../src/engine/engine-slot';
import { engineOf } from './context-engine';
import { truncateOversizedToolResults, type TruncatedToolResult } from '../../src/context/truncate-tool-results';
import { DEFAULTS } from '../../src/config/defaults';
import type { ContextManagement, ProviderCompaction } from '../../src/model/model-client';
import { providerCompactionOf, summaryStandInNote } from '../../src/context/provider-compaction';
import { log } from '@temporalio/activity';

/** What the model will see this call, with the report of every step that shaped it. */
export interface PreparedContext {
  readonly messages: AgentMessage[];
  readonly systemPromptAddition?: string | undefined;
  readonly estimatedTokens: number;
  /** Tokens the messages may take: the window less the reserve and the call's overhead (system prompt, tools). */
  readonly budget: number;
  /** The window the budget came from: configured, or lower when the provider taught Keel its real limit. */
  readonly window: number;
  readonly pipeline: ContextPipelineReport;
  readonly engine?: AssembleReport | undefined;
  /** Tool results cut for the model's view (stored in full). */
  readonly truncated: TruncatedToolResult[];
  /** Messages tokenized by this call (entries without a stored estimate, or changed by repair). */
  readonly tokensComputed: number;
  /** The engine slot that assembled this context (the turn calls its afterTurn and ingests the reply). */
  readonly engineInstance: ContextEngineSlot;
  /** Server-side context management for this call: the engine asks for it and the model client has it. */
  readonly contextManagement?: ContextManagement | undefined;
  /** The provider's compaction block that stands in place of the summary message (sent back verbatim). */
  readonly providerCompaction?: ProviderCompaction | undefined;
  /** How the active window was read: from the worker's copy plus new entries, or rebuilt from the database. */
  readonly windowLoad: WindowLoad;
  /** Whether the context pipeline ran over the new messages only (`tail`) or the whole window. */
  readonly pipelineRun: 'tail' | 'full';
}

/**
 * prepareContext (docs/architecture.md, "A turn"): load since the last compaction → repair → validate turns → limit turns →
 * strip details → engine.assemble(budget). Reads the active window only, never the whole transcript.
 */
export async function prepareContext(
  deps: ActivityDeps,
  agentId: string,
  sessionKey: string,
  sessionId: string,
  opts: {
    /** The model's window in force, as the caller read it (a turn's context, the flush's model). */
    readonly window: number;
    /** Tokens the call sends besides the messages (system prompt, tool definitions): the messages get the rest. */
    readonly overheadTokens?: number;
    /** The worker's copy of active windows (turns); absent → read the window from the database. */
    readonly windows?: ActiveWindowCache;
    /** The context of the call that wrote this entry: the window's entries before it (a compaction rebuilds the last call). */
    readonly beforeEntryId?: string;
  },
): Promise<PreparedContext> {
  const loaded = await (opts.windows ?? new ActiveWindowCache(0)).load(deps.db, agentId, sessionId);
  const { load: windowLoad } = loaded;
  const active = opts.beforeEntryId === undefined ? loaded.window : windowBefore(loaded.window, opts.beforeEntryId);
  const raw = activeMessages(active.compaction, active.entries, active.summarized);
  // Per-entry estimates stored at append time seed the cache: a turn tokenizes only what changed.
  const tokenCache = new TokenCache();
  const missing: Array<{ id: string; tokens: number }> = [];
  let seeded = 0;
  for (const row of active.entries) {
    const entry = row.entry;
    if (entry.type !== 'message') continue;
    seeded++;
    const tokens = tokenCache.getOrCompute(
      undefined,
      entry.message,
      () => row.tokenEstimate ?? deps.estimate(entry.message),
    );
    if (row.tokenEstimate === null) {
      missing.push({ id: row.id, tokens });
      row.tokenEstimate = tokens; // the worker's copy of the window counts it once, like the database
    }
  }
  // Imported entries arrive without estimates; cache them once so later turns skip them.
  if (missing.length > 0) await setTokenEstimates(deps.db, agentId, sessionId, missing);
  // No allow list: a call to an unknown tool was answered with an error result, which the model should see.
  const historyLimit = resolveHistoryLimit(sessionKey, deps.config.historyLimits);
  // The window's own pipeline: on a cached window, only what was appended since its last clean run goes through it.
  const {
    messages,
    report,
    ran: pipelineRun,
  } = active.pipeline.run(raw, { provider: deps.config.modelProvider, ...(historyLimit ? { historyLimit } : {}) });
  const { window } = opts;
  const budget = Math.max(0, window - reserveForWindow(window, deps.config) - (opts.overheadTokens ?? 0));
  const maxToolChars = Math.floor(budget * DEFAULTS.toolResultMaxBudgetShare * DEFAULTS.charsPerToken);
  const { messages: fitted, truncated } = truncateOversizedToolResults(messages, maxToolChars);
  const engine = engineOf(deps);
  // The engine sees every stored message before it assembles: bootstrapped on first sight, then ingested.
  await engine.sync({ sessionId, sessionKey }, storedMessages(active.entries));
  const assembled = await engine.assemble({ sessionId, sessionKey, messages: fitted, tokenBudget: budget, tokenCache });
  const native = nativeContext(
    deps,
    agentId,
    engine,
    assembled.contextManagement,
    active.compaction,
    assembled.messages,
  );
  return {
    messages: assembled.messages,
    systemPromptAddition: [assembled.systemPromptAddition, native.recallNote].filter(Boolean).join('\n\n') || undefined,
    estimatedTokens: assembled.estimatedTokens,
    budget,
    window,
    pipeline: report,
    engine: assembled.report,
    truncated,
    tokensComputed: missing.length + (tokenCache.misses - seeded),
    engineInstance: engine,
    ...(native.contextManagement ? { contextManagement: native.contextManagement } : {}),
    ...(native.providerCompaction ? { providerCompaction: native.providerCompaction } : {}),
    windowLoad,
    pipelineRun,
  };
}

/** The window as it was before `entryId` was appended (the whole window when it holds no such entry). */
function windowBefore(window: ActiveWindow, entryId: string): ActiveWindow {
  const index = window.entries.findIndex((e) => e.id === entryId);
  return index < 0
    ? window
    : { ...window, entries: window.entries.slice(0, index), pipeline: new IncrementalPipeline() };
}

/** The window's messages with their entry ids and seqs, as the engine slot takes them. */
function storedMessages(entries: readonly WindowEntry[]): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (const row of entries)
    if (row.entry.type === 'message') out.push({ entryId: row.id, seq: row.seq, message: row.entry.message });
  return out;
}

/** Agents already told (per worker process) that their provider has no context management. */
const toldNoContextManagement = new Set<string>();

/**
 * The engine's context management when the model client can send it, with the provider's
 * compaction block when the window opens with one; otherwise nothing, and Keel's own compaction
 * does the work (said once per agent and worker). The summary stand-in's recall line moves to
 * the system prompt, since the block itself must go back unchanged.
 */
function nativeContext(
  deps: ActivityDeps,
  agentId: string,
  engine: ContextEngineSlot,
  contextManagement: ContextManagement | undefined,
  compaction: CompactionEntry | undefined,
  messages: readonly AgentMessage[],
): { contextManagement?: ContextManagement; providerCompaction?: ProviderCompaction; recallNote?: string } {
  if (!contextManagement) return {};
  if (!deps.model.supportsContextManagement) {
    if (!toldNoContextManagement.has(agentId)) {
      toldNoContextManagement.add(agentId);
      log.warn(
        `context engine ${engine.engine.id}: the model provider has no server-side context management; Keel's own compaction runs instead`,
        { agentId, provider: deps.config.modelProvider },
      );
    }
    return {};
  }
  const block = providerCompactionOf(compaction);
  const recallNote = block && compaction ? summaryStandInNote(messages, compaction.id) : undefined;
  if (!block || recallNote === undefined) return { contextManagement };
  return { contextManagement, providerCompaction: block, recallNote };
}
