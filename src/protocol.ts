/**
 * The wire protocol between clients, workers and workflows: names, payload types and failure types,
 * defined once. Workflows and clients both import this module; clients never import `workflows/`.
 * Payloads are small by design: ids, counts and the texts a person typed or reads, never transcripts.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export const DEFAULT_TASK_QUEUE = 'keel';

/** Failure `type`s carried by ApplicationFailure, for callers to branch on. */
export const FailureTypes = {
  /** Bad input that retrying cannot fix. */
  InvalidInput: 'KeelInvalidInput',
  /** The provider said the prompt is too long; the turn answers with compaction. */
  ContextOverflow: 'ContextOverflow',
  /** Overflow again after compacting and retrying once. */
  ContextOverflowAfterCompaction: 'ContextOverflowAfterCompaction',
  /** The model rejected the request (400 other than overflow); fix the request or config. */
  ModelRequestInvalid: 'ModelRequestInvalid',
  /** 401/403: credentials are wrong or missing. */
  ModelAuth: 'ModelAuth',
  /** A send named the entry it was written against, and the session has moved on. */
  StaleTurn: 'KeelStaleTurn',
  /** Compaction could not reclaim tokens. */
  SummarizationFailed: 'summarization_failed',
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
}

export interface SessionTuning {
  readonly modelHeartbeatTimeoutMs?: number;
  readonly toolHeartbeatTimeoutMs?: number;
}

export interface SessionCarriedState {
  readonly turnsCompleted: number;
  readonly lastEntryId: string | null;
  readonly runs: number;
}

export interface TurnRequest {
  readonly text: string;
  /**
   * The entry id the sender last saw; when set and the session has moved on, the Update validator
   * rejects the send as stale instead of answering out of context.
   */
  readonly expectedLastEntryId?: string;
}

export interface TurnUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface TurnResult {
  /** The assistant's reply; empty when the reply was silent (NO_REPLY). */
  readonly reply: string;
  readonly silent: boolean;
  readonly userEntryId: string;
  readonly assistantEntryId: string;
  /** 1-based turn number over the session's life. */
  readonly turn: number;
  readonly usage: TurnUsage;
  readonly modelCalls: number;
}

export type PressureLevel = 'normal' | '50' | '70' | '85';

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
}

export const turnUpdate = defineUpdate<TurnResult, [TurnRequest]>('turn');
export const statusQuery = defineQuery<SessionStatus>('status');

/** Max characters of a user message: far above any real message, far below Temporal's 2 MiB payload limit. */
export const MAX_USER_TEXT_CHARS = 200_000;
