/**
 * The one check of a request's shape, used by the client before anything is sent (so a rejected
 * request creates nothing) and by the session workflow on admission (a request from an older client).
 */
import type { SessionEventKind } from './lifecycle';
import { runBudgetProblem } from '../turn/run-budget';
import { MAX_REQUEST_BYTES, MAX_USER_TEXT_CHARS, type CompactRequest, type TurnRequest } from '../protocol';
import { isThinkingLevel, THINKING_LEVELS } from '../turn/thinking-level';

/** What is wrong with a request: the field and the fix. */
export interface RequestProblem {
  readonly field: string;
  readonly message: string;
}

/** A request Keel refused before sending anything: `field` names what to fix. */
export class KeelRequestError extends Error {
  override readonly name = 'KeelRequestError';
  readonly field: string;
  constructor(problem: RequestProblem) {
    super(problem.message);
    this.field = problem.field;
  }
}

const EVENTS: ReadonlySet<string> = new Set<SessionEventKind>([
  'user_message',
  'heartbeat',
  'cron',
  'exec_notice',
  'bookkeeping',
  'subagent_announce',
]);

/** Undefined when the turn request can be admitted. */
export function checkTurnRequest(request: TurnRequest | undefined): RequestProblem | undefined {
  if (typeof request?.text !== 'string' || request.text.trim() === '') {
    return { field: 'text', message: 'text: must be a non-empty string' };
  }
  if (request.text.length > MAX_USER_TEXT_CHARS) {
    return {
      field: 'text',
      message: `text: ${request.text.length} characters exceeds the limit of ${MAX_USER_TEXT_CHARS}; send large content as a file or a tool result`,
    };
  }
  if (request.event !== undefined && !EVENTS.has(request.event)) {
    return { field: 'event', message: `event: "${String(request.event)}" is not one of ${[...EVENTS].join(', ')}` };
  }
  if (request.thinking !== undefined && !isThinkingLevel(request.thinking)) {
    return {
      field: 'thinking',
      message: `thinking: "${String(request.thinking)}" is not one of ${THINKING_LEVELS.join(', ')}`,
    };
  }
  return runBudgetProblem(request.budget);
}

/** Undefined when the compaction request can be admitted. */
export function checkCompactRequest(request: CompactRequest | undefined): RequestProblem | undefined {
  const keep = request?.keepRecentTokens;
  if (keep !== undefined && (!Number.isInteger(keep) || keep < 0)) {
    return { field: 'keepRecentTokens', message: 'keepRecentTokens: must be a whole number of tokens ≥ 0' };
  }
  if (request?.instructions !== undefined && request.instructions.length > MAX_USER_TEXT_CHARS) {
    return { field: 'instructions', message: `instructions: longer than ${MAX_USER_TEXT_CHARS} characters` };
  }
  return undefined;
}

/** Undefined when the encoded request fits one Temporal payload with room to spare. */
export function checkRequestSize(encodedBytes: number): RequestProblem | undefined {
  if (encodedBytes <= MAX_REQUEST_BYTES) return undefined;
  return {
    field: 'text',
    message: `request is ${encodedBytes} bytes, over the limit of ${MAX_REQUEST_BYTES} bytes; send large content as a file or a tool result`,
  };
}
