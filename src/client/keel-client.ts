import { randomUUID } from 'node:crypto';
import { Client, WithStartWorkflowOperation, type Connection } from '@temporalio/client';
import { retryAdmission } from './retry-admission';
import { sessionWorkflowId, parseSessionKey } from '../sessions/session-key';
import {
  DEFAULT_TASK_QUEUE,
  compactUpdate,
  type CompactRequest,
  type CompactionWorkflowResult,
  statusQuery,
  turnUpdate,
  type SessionStatus,
  type SessionTuning,
  type SessionWorkflowInput,
  type TurnRequest,
  type TurnResult,
} from '../protocol';

export interface KeelClientOptions {
  readonly connection: Connection;
  readonly namespace?: string;
  readonly taskQueue?: string;
  /** The agent that owns sessions whose key does not name one (cron:/hook: keys). Default `main`. */
  readonly defaultAgentId?: string;
  readonly contextWindowTokens?: number;
  /** Activity timeouts for sessions this client starts (tests shorten them). */
  readonly tuning?: SessionTuning;
}

export interface SendMessageOptions {
  /** Idempotency: a retried send with the same id is answered once (Temporal Update id). */
  readonly requestId?: string;
  /** Reject the send if the session has moved past this entry. */
  readonly expectedLastEntryId?: string;
  /** A system event (heartbeat, cron, exec notice) runs a turn without refreshing freshness. */
  readonly event?: TurnRequest['event'];
}

/**
 * The application's handle on Keel: send a message to a session and get the reply after a durable
 * turn; read a session's status. Starts the session workflow on first use.
 */
export class KeelClient {
  readonly temporal: Client;
  private readonly taskQueue: string;

  constructor(private readonly opts: KeelClientOptions) {
    this.temporal = new Client({ connection: opts.connection, namespace: opts.namespace ?? 'default' });
    this.taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /** Which agent owns a session key, and the session workflow's id. Throws InvalidSessionKeyError. */
  identify(sessionKey: string): { agentId: string; workflowId: string } {
    const parsed = parseSessionKey(sessionKey);
    const agentId = parsed.agentId ?? this.opts.defaultAgentId ?? 'main';
    return { agentId, workflowId: sessionWorkflowId(agentId, sessionKey) };
  }

  /** Runs one durable turn and returns the assistant's reply. */
  async sendMessage(sessionKey: string, text: string, opts: SendMessageOptions = {}): Promise<TurnResult> {
    // A fixed Update id makes every retry of this send the same Update: it runs at most once.
    const updateId = opts.requestId ?? randomUUID();
    const request: TurnRequest = {
      text,
      ...(opts.expectedLastEntryId ? { expectedLastEntryId: opts.expectedLastEntryId } : {}),
      ...(opts.event ? { event: opts.event } : {}),
    };
    // More than 10 in-flight Updates per workflow are refused; wait for room instead of failing the send.
    return retryAdmission(() =>
      this.temporal.workflow.executeUpdateWithStart(turnUpdate, { args: [request], updateId, startWorkflowOperation: this.startSession(sessionKey) }),
    );
  }

  /**
   * Compacts a session now, between its turns (a manual compaction: a hard checkpoint unless
   * `keepRecentTokens` is given), and returns the compaction's result.
   */
  async compact(sessionKey: string, request: CompactRequest = {}): Promise<CompactionWorkflowResult> {
    return this.temporal.workflow.executeUpdateWithStart(compactUpdate, { args: [request], startWorkflowOperation: this.startSession(sessionKey) });
  }

  /** Starts the session workflow if it is not running (Update-with-start joins a running one). */
  private startSession(sessionKey: string): WithStartWorkflowOperation<(input: SessionWorkflowInput) => Promise<void>> {
    const { agentId, workflowId } = this.identify(sessionKey);
    const input: SessionWorkflowInput = {
      agentId,
      sessionKey,
      ...(this.opts.contextWindowTokens ? { contextWindowTokens: this.opts.contextWindowTokens } : {}),
      ...(this.opts.tuning ? { tuning: this.opts.tuning } : {}),
    };
    return new WithStartWorkflowOperation('sessionWorkflow', { workflowId, taskQueue: this.taskQueue, args: [input], workflowIdConflictPolicy: 'USE_EXISTING' });
  }

  /** The session workflow's view of context usage and compactions. */
  async getStatus(sessionKey: string): Promise<SessionStatus> {
    const { workflowId } = this.identify(sessionKey);
    return this.temporal.workflow.getHandle(workflowId).query(statusQuery);
  }
}
