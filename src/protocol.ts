/**
 * The wire protocol between clients, workers and workflows: names, payload types and failure types,
 * defined once. Workflows and clients both import this module; clients never import `workflows/`.
 * Payloads are small by design: ids, counts and the texts a person typed or reads, never transcripts.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SessionEventKind } from './sessions/lifecycle';
import type { SpawnAdvice } from './context/spawn-policy';
import type { ThinkingLevel } from './turn/thinking-level';

export const DEFAULT_TASK_QUEUE = 'keel';

/** The tool the session workflow runs itself: it starts the subagent's child workflow. */
export const SESSIONS_SPAWN_TOOL = 'sessions_spawn';

/** Failure `type`s carried by ApplicationFailure, for callers to branch on; each is `Keel` and its key. */
export const FailureTypes = {
  /** Bad input that retrying cannot fix. */
  InvalidInput: 'KeelInvalidInput',
  /** The provider said the prompt is too long; the turn answers with compaction. */
  ContextOverflow: 'KeelContextOverflow',
  /** Overflow again after compacting and retrying once. */
  ContextOverflowAfterCompaction: 'KeelContextOverflowAfterCompaction',
  /** The model rejected the request (400 other than overflow); fix the request or config. */
  ModelRequestInvalid: 'KeelModelRequestInvalid',
  /** 401/403: credentials are wrong or missing. */
  ModelAuth: 'KeelModelAuth',
  /** A send named the entry it was written against, and the session has moved on. */
  StaleTurn: 'KeelStaleTurn',
  /** Compaction could not reclaim tokens. */
  SummarizationFailed: 'KeelSummarizationFailed',
  /** The summarizer spend limit is reached: the compaction writes the extractive summary. */
  SummarizerSpendLimited: 'KeelSummarizerSpendLimited',
  /** The model kept failing with a transient error (429/529/5xx) past the retry budget. */
  ModelUnavailable: 'KeelModelUnavailable',
  /** A bug or an unexpected failure inside a turn; the session goes on with the next request. */
  TurnFailed: 'KeelTurnFailed',
  /** The database rejected the data itself (SQLSTATE class 22/23/42); retrying cannot fix it. */
  DataError: 'KeelDataError',
  /** A request named a session that does not exist; nothing was created. */
  UnknownSession: 'KeelUnknownSession',
  /** The worker does not serve this agent (KEEL_ALLOWED_AGENTS); nothing was written. */
  AgentNotAllowed: 'KeelAgentNotAllowed',
  /** Its sender cancelled the request (`cancelRequest`): a running turn stopped, a queued one never ran. */
  Cancelled: 'KeelCancelled',
  /** A decision named an approval the session is not waiting for (decided long ago, or never asked). */
  UnknownApproval: 'KeelUnknownApproval',
} as const;

/** Starts (or continues) the one long-lived workflow of a session. */
export interface SessionWorkflowInput {
  readonly agentId: string;
  readonly sessionKey: string;
  /** Small state carried across continue-as-new. */
  readonly carried?: SessionCarriedState;
  /** The model's context window, for status (the worker's config decides compaction). */
  readonly contextWindowTokens?: number;
  /** Activity timeouts; tests shorten them so a killed worker is noticed quickly. */
  readonly tuning?: SessionTuning;
  /** A spawned subagent's first request (its task), admitted when the run starts. */
  readonly firstRequest?: SessionRequest;
  /**
   * Set when an application's workflow runs this session as one agent task (`runAgentTask`): the
   * session answers `firstRequest` with these settings, then ends with its outcome as the result.
   */
  readonly task?: AgentTaskScope;
}

/** The system prompt modes (`full`, `minimal` or `none`), as the agent config names them. */
export type AgentPromptMode = 'full' | 'minimal' | 'none';

/** How an agent task's model calls differ from the agent's own sessions. */
export interface AgentTaskScope {
  /** The system prompt mode; unset: the agent's rule for the session key (its `promptMode` for a main key). */
  readonly promptMode?: AgentPromptMode;
  /** Only these of the agent's tools (built-ins included) are offered; unset: all of them. */
  readonly tools?: readonly string[];
}

/** What an agent task answered (`runAgentTask`). */
export interface AgentTaskResult {
  /** The final reply; empty when the agent answered silently (NO_REPLY). */
  readonly reply: string;
  readonly silent: boolean;
  /** The session the task ran in: `keel status`, `keel history` and a later message reach it. */
  readonly sessionKey: string;
  /** Tokens of every model call of the task. */
  readonly usage: TokenUsage;
  readonly modelCalls: number;
  /** The tool calls in the order they ran (a long run's most recent; `toolCallsOmitted` counts the rest). */
  readonly toolCalls: readonly TurnToolCall[];
  readonly toolCallsOmitted?: number;
  /** Set when the task's run stopped at its budget: the reply is its report; a message to `sessionKey` continues it. */
  readonly stopReason?: TurnStopReason;
}

/** Registered workflow type name of a session's workflow (also the type of runs started before the two below). */
export const SESSION_WORKFLOW_TYPE = 'sessionWorkflow';
/** Registered workflow type name of a subagent's session, started by its parent's `sessions_spawn`. */
export const SUBAGENT_WORKFLOW_TYPE = 'subagentWorkflow';
/** Registered workflow type name of an application's agent task (`runAgentTask`'s child workflow). */
export const AGENT_TASK_WORKFLOW_TYPE = 'agentTaskWorkflow';

export interface SessionTuning {
  /** Time a model call may keep retrying transient provider errors (429/529/5xx) before the turn fails. */
  readonly modelRetryBudgetMs?: number;
  /** Time the memory flush may take, retries included, before the compaction goes on without it. */
  readonly memoryFlushBudgetMs?: number;
  /** The session workflow closes after this long with nothing to do; the next message restarts it. */
  readonly idleCloseMs?: number;
  readonly modelHeartbeatTimeoutMs?: number;
  readonly toolHeartbeatTimeoutMs?: number;
  readonly summarizeHeartbeatTimeoutMs?: number;
  /** Continue-as-new after this many turns (default DEFAULTS.maxTurnsPerRun). */
  readonly maxTurnsPerRun?: number;
  /** A long turn hands itself on by continue-as-new after this many model calls in one run (default DEFAULTS.maxRoundsPerRun). */
  readonly maxRoundsPerRun?: number;
}

/** A manual compaction (`keel compact`, `KeelClient.compact`). */
export interface CompactRequest {
  /** Recent tail kept verbatim; unset → a hard checkpoint, as OpenClaw's `/compact`. */
  readonly keepRecentTokens?: number | undefined;
  /** Extra focus for the summarizer. */
  readonly instructions?: string | undefined;
}

export interface SessionCarriedState {
  readonly turnsCompleted: number;
  readonly lastEntryId: string | null;
  readonly runs: number;
  readonly contextTokens?: number;
  readonly compactionCount?: number;
  readonly lastCompactionId?: string | null;
  readonly promptCache?: PromptCacheCounters;
  /** Requests admitted but not yet run, in admission order. */
  readonly queued?: readonly SessionRequest[];
  /** Maintenance decided after the last turn and not yet run. */
  readonly pendingMaintenance?: readonly MaintenanceJob[];
  /** Outcomes not yet collected by their sender (bounded). */
  readonly outcomes?: ReadonlyArray<readonly [string, RequestOutcome]>;
  /** Recently admitted request ids: a resent request is answered, not run again (bounded). */
  readonly recentRequestIds?: readonly string[];
  /** What the last model call's context was made of (status). */
  readonly contextSplit?: ContextSplit;
  /** A subagent's answers of its current run, not yet announced to its parent, in the order it ran them. */
  readonly subagentAnswers?: readonly SubagentAnswer[];
  /** A turn whose tool call waited for approval when the run continued as new: the next run resumes it first. */
  readonly suspendedTurn?: SuspendedTurn;
  /** The last turn its sender cancelled, until the next turn's begin marks its entries out of every context. */
  readonly cancelledTurn?: { readonly userEntryId: string; readonly markerId: string };
  /** A compaction running beside the session: the next run hears when it lands. */
  readonly backgroundCompaction?: BackgroundCompaction;
}

/** A compaction running as its own workflow beside the session, which goes on answering meanwhile. */
export interface BackgroundCompaction {
  readonly compactionId: string;
  readonly trigger: CompactionTriggerName;
  /** ISO time it started. */
  readonly startedAt: string;
}

/** What a background compaction tells its session when it ends: its result, or why it failed. */
export type CompactionLanded =
  | { readonly compactionId: string; readonly result: CompactionWorkflowResult }
  | { readonly compactionId: string; readonly error: string };

/** Sent by a background compaction to its session when it ends (success or failure). */
export const compactionLandedSignal = defineSignal<[CompactionLanded]>('compactionLanded');

/** A model reply as its call stored it, with what the turn needs to go on from it. */
export interface StoredModelReply {
  readonly entryId: string;
  readonly text: string;
  /** `approval`: the call waits for a person before it runs (absent for every other call). */
  readonly toolCalls: ReadonlyArray<{
    readonly id: string;
    readonly name: string;
    readonly approval?: ToolCallApproval;
  }>;
  readonly stopReason: string;
  readonly usage: TokenUsage;
  /** Estimated tokens of the context sent, plus the reply. */
  readonly contextTokens: number;
  /** What the context sent was made of (absent when a retry found the reply already stored). */
  readonly split?: ContextSplit;
  /** The model's window this call was budgeted against (absent with `split`): finishTurn need not read it again. */
  readonly contextWindow?: number;
}

/**
 * A turn the run hands on to the next by continue-as-new: its request and what it has done so far,
 * then where it stopped: at a tool call waiting for approval, or between two rounds of a long run.
 */
export type SuspendedTurn = SuspendedAtApproval | SuspendedAtRound;

/** What every handed-on turn carries: its request, its session and how far it got. */
interface SuspendedTurnBase {
  readonly request: { readonly requestId: string; readonly turn: TurnRequest };
  readonly sessionId: string;
  readonly progress: {
    readonly turn: number;
    readonly userEntryId: string;
    readonly touch: boolean;
    readonly streamTo?: string;
    readonly parentId: string;
    readonly usage: TokenUsage;
    readonly modelCalls: number;
    readonly compacted: boolean;
    readonly toolCalls: readonly TurnToolCall[];
    /** Tool calls left out of `toolCalls` (a long run keeps its most recent). */
    readonly toolCallsOmitted?: number;
    /** Compactions the turn ran so far. */
    readonly compactions?: number;
    /** The turn's run budget, decided at its start. */
    readonly budget?: ResolvedRunBudget;
    /** The turn's own thinking level, when its request set one. */
    readonly thinking?: ThinkingLevel;
  };
}

/** A turn handed on while one of its tool calls waits for approval. */
export interface SuspendedAtApproval extends SuspendedTurnBase {
  /** The model reply whose tool calls the turn was answering, and the index of the call that waits. */
  readonly reply: StoredModelReply;
  readonly callIndex: number;
  readonly approval: PendingApproval;
}

/** A long turn handed on between two rounds, to keep each run's history bounded: its next step is a model call. */
export interface SuspendedAtRound extends SuspendedTurnBase {
  readonly atRound: number;
}

/**
 * One request a subagent ran, as its parent hears it: the reply entry to read, or why it failed.
 * `key` is the child's request id (`task:<id>` for the task, `steer:…` for a steer).
 */
export type SubagentAnswer =
  | { readonly key: string; readonly outcome: 'done'; readonly replyEntryId: string }
  | { readonly key: string; readonly outcome: 'failed'; readonly error: string };

/**
 * Work the session runs between requests: the soft-threshold flush, a threshold compaction (flush
 * first), or the start of a background compaction (`soft`: started, not waited for).
 */
export type MaintenanceJob =
  | { readonly kind: 'memoryFlush'; readonly sessionId: string }
  | { readonly kind: 'compaction'; readonly trigger: 'threshold'; readonly sessionId: string }
  | { readonly kind: 'compaction'; readonly trigger: 'soft'; readonly sessionId: string };

/**
 * One request to a session, admitted by Signal in arrival order (Signals have no in-flight limit, unlike
 * Updates), its outcome collected with the `awaitResult` Update. `requestId` makes a resend idempotent.
 */
export type SessionRequest =
  | { readonly requestId: string; readonly turn: TurnRequest }
  | { readonly requestId: string; readonly compact: CompactRequest };

/** What became of a request: its result, its failure, or "ask again" (the run is moving to a new run). */
export type RequestOutcome =
  | { readonly status: 'done'; readonly turn: TurnResult }
  | { readonly status: 'done'; readonly compaction: CompactionWorkflowResult }
  | { readonly status: 'failed'; readonly type: string; readonly message: string }
  | { readonly status: 'retry' }
  | { readonly status: 'unknown' };

export const enqueueSignal = defineSignal<[SessionRequest]>('enqueue');

/** The request id of a subagent's announce to its parent: one per (subagent, child request), so it lands once. */
export function announceRequestId(subagentId: string, key: string): string {
  return `announce:${subagentId}:${key}`;
}

/** The subagent an announce's request id names; undefined for any other request. */
export function announcingSubagent(requestId: string): string | undefined {
  return /^announce:([^:]+):/.exec(requestId)?.[1];
}
/**
 * Waits for a request's outcome. With `request` it admits it first (as `enqueue` would): a sender
 * admits and waits in one Update-with-Start, one round trip fewer than Signal-with-Start + Update.
 */
export const awaitResultUpdate = defineUpdate<
  RequestOutcome,
  [{ readonly requestId: string; readonly request?: SessionRequest }]
>('awaitResult');

/** Whether a session took a steer: a subagent refuses one once its run has ended (its last answer announced). */
export type SteerAdmission = { readonly admitted: true } | { readonly admitted: false; readonly reason: string };

/**
 * Steers a session (a parent's message to its subagent): admits the turn request and answers at
 * once, or refuses it when the run has ended. A steer that lands while the child announces waits for
 * the announce, so it is either in that announce's run or refused, never lost between the two.
 */
export const steerUpdate = defineUpdate<SteerAdmission, [SessionRequest]>('steer');

/**
 * Cancels one turn request: a queued one is withdrawn, a running one stops (its in-flight activity is
 * cancelled) and settles as failed `KeelCancelled`. What the turn already stored stays (the user
 * message, finished model calls and tool results, paired as after a crash); a model call in flight
 * stores nothing. A compaction, or an id the session does not hold (finished, unknown), is left alone.
 */
export const cancelRequestSignal = defineSignal<[{ readonly requestId: string }]>('cancelRequest');

export interface TurnRequest {
  readonly text: string;
  /**
   * What kind of event this message is; default `user_message`. System events (heartbeat, cron,
   * exec notices) run a turn but do not refresh or expire the session's freshness.
   */
  readonly event?: SessionEventKind;
  /**
   * The entry id the sender last saw; when set and the session has moved on, the Update validator
   * rejects the send as stale instead of answering out of context.
   */
  readonly expectedLastEntryId?: string;
  /** A subagent's result: (subagent, key) lands in this session once, whatever resends it. */
  readonly announce?: { readonly subagentId: string; readonly key: string };
  /** A spawned child's first turn: the message is the task stored with its run (kept out of history). */
  readonly subagentTask?: boolean;
  /**
   * False when nobody listens for the reply's text as it streams: the worker then sends no NOTIFY for
   * it (two statements per model call saved). Absent means stream, as before this field existed.
   */
  readonly streamReply?: boolean;
  /** This turn's run budget, over the agent's (`runBudget` in keel.config.json, or the environment). */
  readonly budget?: RunBudget;
  /** This turn's thinking level, over the session's (`/think`) and its agent's (`thinkingLevel`). */
  readonly thinking?: ThinkingLevel;
}

/**
 * How far one turn may run before it stops to report: model calls, and tokens billed by its model
 * calls (input, output, cache reads and writes). `null` is no limit; a step limit of `null` is
 * refused unless a token limit is set, so no run is unbounded.
 */
export interface RunBudget {
  readonly maxModelCalls?: number | null;
  readonly maxTokens?: number | null;
}

/** A turn's run budget with every field decided (the agent's, then the request's). */
export interface ResolvedRunBudget {
  readonly maxModelCalls: number | null;
  readonly maxTokens: number | null;
}

/**
 * Why a turn stopped before the model finished on its own: it reached its run budget, got one last
 * call without tools to report where it stands, and can be continued by another message.
 */
export interface TurnStopReason {
  readonly kind: 'budget';
  /** The limit that was reached. */
  readonly limit: 'modelCalls' | 'tokens';
  /** Model calls made, the report's included, and the step limit. */
  readonly modelCalls: number;
  readonly maxModelCalls: number | null;
  /** Tokens billed by the turn's model calls, and the token limit. */
  readonly tokens: number;
  readonly maxTokens: number | null;
}

/**
 * Tokens model calls used, by how the provider billed the prompt: one shape for a call, a turn and
 * a session's counters (added with `addUsage`, `src/turn/token-usage.ts`).
 */
export interface TokenUsage {
  /** Prompt tokens billed at the full rate (the provider's `input_tokens`: not read from or written to its cache). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Prompt tokens the provider read from its prompt cache (billed at a tenth on Anthropic). */
  readonly cacheReadTokens: number;
  /** Prompt tokens the provider wrote to its prompt cache (billed at 1.25× on Anthropic). */
  readonly cacheWriteTokens: number;
  /** Some of these figures are Keel's own count: the model server reported no usage for a call. */
  readonly estimated?: true;
}

/** A session's prompt tokens since it started, by how the provider's prompt cache served them (its usage less the output). */
export type PromptCacheCounters = Omit<TokenUsage, 'outputTokens'>;

export interface TurnResult {
  /** The assistant's reply; empty when the reply was silent (NO_REPLY). */
  readonly reply: string;
  readonly silent: boolean;
  readonly userEntryId: string;
  readonly assistantEntryId: string;
  /** 1-based turn number over the session's life. */
  readonly turn: number;
  readonly usage: TokenUsage;
  readonly modelCalls: number;
  /**
   * The turn's tool calls in the order they ran, with whether each answered with an error result; a
   * long run lists its most recent ones (`toolCallsOmitted` says how many earlier calls are left out).
   */
  readonly toolCalls?: readonly TurnToolCall[];
  readonly toolCallsOmitted?: number;
  /** Set when the turn stopped at its run budget instead of finishing on its own. */
  readonly stopReason?: TurnStopReason;
  /** Compactions the turn ran while it worked (absent when none). */
  readonly compactions?: number;
}

/** One tool call of a turn, as a chat shows it. */
export interface TurnToolCall {
  /** The model's tool call id (absent in results recorded before it was reported). */
  readonly id?: string;
  readonly name: string;
  readonly isError: boolean;
  /** An error result's reason, its first line cut short (absent when it ran well). */
  readonly error?: string;
}

export type PressureLevel = 'normal' | '50' | '70' | '85';

/** What the last model call's context was made of, in estimated tokens ("what's eating my context"). */
export interface ContextSplit {
  /** The system prompt without the workspace files. */
  readonly systemTokens: number;
  /** Workspace (bootstrap) files in the system prompt. */
  readonly bootstrapTokens: number;
  /** Tool definitions. */
  readonly toolTokens: number;
  /** The conversation: summary, kept history and this turn. */
  readonly historyTokens: number;
}

export interface SessionStatus {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly turnsCompleted: number;
  readonly queuedTurns: number;
  readonly lastEntryId: string | null;
  readonly contextTokens: number;
  readonly contextWindow: number;
  readonly percentUsed: number;
  readonly pressure: PressureLevel;
  readonly compactionCount: number;
  readonly lastCompactionId: string | null;
  /** The configured window, when a learned provider limit lowered `contextWindow` below it. */
  readonly configuredContextWindow?: number;
  /** The session's prompt tokens by cache use (provider prompt caching), once a turn reported them. */
  readonly promptCache?: PromptCacheCounters & {
    /** Share of prompt tokens read from the cache, in percent (one decimal). */
    readonly hitRatePercent: number;
  };
  /** The model the last turn called (the session's override, else its agent's model). */
  readonly model?: string;
  /** The split of the last model call's context (absent until this run made one). */
  readonly contextSplit?: ContextSplit;
  /** The spawn-policy level `percentUsed` reaches (default thresholds) and what the agent should do at it. */
  readonly spawnAdvice: SpawnAdvice;
  /**
   * Set when threshold compaction is not running as usual: `paused` after 3 consecutive failures
   * (a manual compaction that succeeds resumes it), `held` after a low-yield compaction until the
   * context reaches `untilTokens`.
   */
  readonly autoCompaction?: { readonly state: 'paused' } | { readonly state: 'held'; readonly untilTokens: number };
  /**
   * Requests that settled and whose outcome nobody has collected yet, oldest first: a subagent's
   * announce (its parent's reply has no waiting sender), or a sender that has not asked yet. A chat
   * collects the ones it did not send to show replies that arrive unasked.
   */
  readonly uncollectedRequestIds?: readonly string[];
  /** Tool calls the running turn waits on a person to approve (absent when none). */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** The turn running now: its model calls, tokens against its budget, and compactions so far (absent between turns). */
  readonly runningTurn?: RunningTurn;
  /**
   * A compaction running beside the session (absent when none), and since when a turn has waited for
   * it because the context reached the hard limit.
   */
  readonly backgroundCompaction?: BackgroundCompaction & {
    readonly runningMs: number;
    readonly turnWaitingMs?: number;
  };
}

/** A running turn's progress, as status shows it. */
export interface RunningTurn {
  readonly turn: number;
  readonly modelCalls: number;
  readonly tokens: number;
  readonly budget: ResolvedRunBudget;
  readonly compactions: number;
  readonly toolCalls: number;
}

export const statusQuery = defineQuery<SessionStatus>('status');

/** Max characters of a user message: far above any real message, far below Temporal's 2 MiB payload limit. */
export const MAX_USER_TEXT_CHARS = 200_000;

/** Max UTF-8 bytes of one request's payload (a character can take 4 bytes; Temporal refuses payloads over 2 MiB). */
export const MAX_REQUEST_BYTES = 1_000_000;

// ---- Compaction (workflows/compaction.ts) ----

import type { IdentifierPolicy } from './compaction/identifiers';

/** What started a compaction; the `compactions.trigger` column and the `KeelTrigger` search attribute. */
export type CompactionTriggerName =
  'threshold' | 'soft' | 'idle' | 'overflow' | 'manual' | 'preflight' | 'revert' | 'rerun';

/**
 * An operator's edit of an earlier compaction, run by the compaction workflow (one per session, so
 * it never races a compaction): `revert` appends an entry that restores the window from before that
 * compaction; `rerun` summarizes its range again as a new record, applied only with `apply`.
 */
export type CompactionOperation =
  | { readonly kind: 'revert'; readonly compactionId: string }
  | { readonly kind: 'rerun'; readonly compactionId: string; readonly apply: boolean; readonly model?: string };

/**
 * A `compactions` row's status. `succeeded` with `degraded: true` means every model attempt failed
 * and the extractive summary was written (tokens were reclaimed, so it is a success; the operator
 * may still retry it for a model summary). `skipped`: nothing was written, and why is a
 * `CompactionSkip`; never a success, whoever asked.
 */
export type CompactionStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

/**
 * Why a compaction wrote nothing: `nothing-to-summarize` before the kept tail, or `no-gain`: the
 * summary with the kept tail (`wouldBeTokens`) would not be smaller than the context it replaces,
 * or `superseded`: another compaction replaced the planned window before this one could write.
 */
export type CompactionSkip =
  | { readonly reason: 'nothing-to-summarize' }
  | { readonly reason: 'no-gain'; readonly wouldBeTokens: number }
  | { readonly reason: 'superseded' };

/** Which identifiers the quality guard protects (`strict` default, `off`, `custom`). */
export type CompactionIdentifierPolicy = IdentifierPolicy;

/** Input of `compactionWorkflow`: ids and numbers only; the workflow reads the transcript through activities. */
export interface CompactionWorkflowInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly trigger: CompactionTriggerName;
  /** Deterministic id generated by the caller (workflow code: `uuid4()`); also the compaction entry's id. */
  readonly compactionId: string;
  /**
   * Recent tail kept verbatim. Unset: `DEFAULTS.keepRecentTokens` for automatic triggers, a hard
   * checkpoint (nothing kept) for `manual`. 0 is always a hard checkpoint.
   */
  readonly keepRecentTokens?: number;
  /** Extra focus for the summarizer (`/compact <instructions>`). */
  readonly instructions?: string;
  /**
   * A compaction inside a running turn: the turn's user message, which the summary carries verbatim
   * when the cut summarizes it, so stacked compactions of a long run never lose its task.
   */
  readonly turnInProgress?: { readonly userEntryId: string };
  /**
   * What the session's last call sent besides the conversation (system prompt, workspace files,
   * tools): the session's context tokens after the compaction count it with the compacted
   * conversation, as `keel status` does. Unset (an operator's run): the conversation alone.
   */
  readonly promptOverheadTokens?: number;
  /** The `compactions` row this run retries (operator retry). */
  readonly retryOf?: string;
  readonly contextWindowTokens: number;
  /** Default `strict`. */
  readonly identifierPolicy?: CompactionIdentifierPolicy;
  /** Workflow-level deadline; default `DEFAULTS.compactionTimeoutMs` (an outer bound; the summarize phase has a shorter deadline of its own). */
  readonly timeoutMs?: number;
  /** Heartbeat timeout of summarizer activities; tests shorten it so a killed worker is noticed quickly. */
  readonly summarizeHeartbeatTimeoutMs?: number;
  /** What the memory flush before it did (`ran`, `skipped: …`, `failed: …`), recorded on the row. */
  readonly memoryFlush?: string;
  /** A revert or rerun of an earlier compaction (`keel compactions revert|rerun`); unset: compact the active window. */
  readonly operation?: CompactionOperation;
  /** Runs beside its session (`soft`, `idle`): it flushes memory first itself, and signals the session when it ends. */
  readonly background?: { readonly sessionWorkflowId: string; readonly tuning?: SessionTuning };
}

/** What `compactionWorkflow` returns: small, no transcript text. */
export interface CompactionWorkflowResult {
  readonly compactionId: string;
  readonly status: CompactionStatus;
  readonly degraded: boolean;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly firstKeptEntryId: string | null;
  /** The compaction entry written (null when skipped). */
  readonly entryId: string | null;
  /** Why a `skipped` compaction wrote nothing (absent when a finished row answers a repeated run). */
  readonly skip?: CompactionSkip;
}

/** Where a running compaction is, for operators and for `compactionsRetry` (which run is this?). */
export interface CompactionProgress {
  readonly compactionId: string;
  readonly step: 'recording' | 'planning' | 'summarizing' | 'guarding' | 'writing' | 'done' | 'failed';
}

export const compactionProgressQuery = defineQuery<CompactionProgress>('compactionProgress');

/** Registered workflow type name of the compaction workflow. */
export const COMPACTION_WORKFLOW_TYPE = 'compactionWorkflow';

/** Failure `type` when a compaction runs past its deadline. */
export const COMPACTION_TIMED_OUT = 'KeelCompactionTimedOut';

/**
 * The compaction workflow id of a session: at most one compaction runs per session, and starting
 * with `workflowIdConflictPolicy: 'USE_EXISTING'` joins the running one instead of racing it.
 *
 * @example compactionWorkflowId('ops', 'agent:ops:main') // 'keel-compaction/ops/agent:ops:main'
 */
export function compactionWorkflowId(agentId: string, sessionKey: string): string {
  return `keel-compaction/${agentId}/${sessionKey}`;
}

/** One session-maintenance run (OpenClaw: prune sessions older than 30 days, keep at most 500 per agent). */
export interface MaintenanceRunInput {
  readonly mode: 'warn' | 'enforce';
  readonly pruneAfterDays?: number;
  readonly maxSessions?: number;
  readonly agentId?: string;
  /** Workflow time, ISO. */
  readonly now: string;
}

/** Counts of what a maintenance run did (enforce) or would do (warn), with a sample of pruned keys. */
export interface MaintenanceRunSummary {
  readonly mode: 'warn' | 'enforce';
  readonly sessionsPruned: number;
  /** Rotated transcripts of kept keys pruned. */
  readonly transcriptsPruned: number;
  /** Of the sessions pruned, those beyond the agent's newest `maxSessions`. */
  readonly sessionsOverCount: number;
  /** Transcript entries deleted with the sessions and transcripts pruned (or that would be). */
  readonly entriesRemoved: number;
  /** Imported entries given their search index (history_search would have done it on first use). */
  readonly entriesIndexed: number;
  readonly sampleKeys: readonly string[];
}

export const MAINTENANCE_WORKFLOW_TYPE = 'maintenanceWorkflow';
/** The Schedule's id: one per namespace and task queue owner, created idempotently by workers. */
export const MAINTENANCE_SCHEDULE_ID = 'keel-maintenance';

/**
 * A tool call that waits for a person: the model-call activity reports it with the call (the policy
 * lives on the worker), and the workflow waits at most `timeoutMs` before denying it.
 */
export interface ToolCallApproval {
  readonly timeoutMs: number;
  /** Who may approve, as configured (people-text; Keel does not check identities). */
  readonly approvers?: readonly string[];
}

/** One tool call waiting for a decision, as status shows it. */
export interface PendingApproval {
  readonly approvalId: string;
  readonly toolName: string;
  readonly toolCallId: string;
  /** ISO time after which the call is denied as "timed out". */
  readonly deadline: string;
}

/** A person's decision on one pending tool call. */
export interface ApprovalDecision {
  readonly approvalId: string;
  readonly decision: 'approve' | 'deny';
  /** Who decided (a user name, an API caller); stored and told to the model. */
  readonly by?: string;
  /** Said with an approval. */
  readonly note?: string;
  /** Why a call was denied; told to the model. */
  readonly reason?: string;
}

/** How an approval ended: the first decision (or the timeout) wins; a later decision gets this back. */
export interface ApprovalOutcome {
  readonly approvalId: string;
  readonly status: 'approved' | 'denied';
  readonly decidedBy?: string;
  readonly note?: string;
  readonly reason?: string;
  readonly decidedAt: string;
}

/** Decides a pending tool call of the running turn; returns the first outcome for a call already decided. */
export const decideApprovalUpdate = defineUpdate<ApprovalOutcome, [ApprovalDecision]>('decideApproval');

/** The reason a call that waited past its deadline is denied with. */
export const APPROVAL_TIMED_OUT = 'timed out';
