import { ApplicationFailure } from '@temporalio/workflow';
import { FailureTypes, MAX_USER_TEXT_CHARS, type TurnRequest } from '../src/protocol';
import type { SessionState } from './session-state';

/** The turn Update's validator: rejects bad input before it is written to history. */
export function validateTurnRequest(request: TurnRequest, state: SessionState): void {
  if (typeof request?.text !== 'string' || request.text.trim() === '') {
    throw ApplicationFailure.nonRetryable('text: must be a non-empty string', FailureTypes.InvalidInput);
  }
  if (request.text.length > MAX_USER_TEXT_CHARS) {
    throw ApplicationFailure.nonRetryable(
      `text: ${request.text.length} characters exceeds ${MAX_USER_TEXT_CHARS}; send large content as a file or tool result`,
      FailureTypes.InvalidInput,
    );
  }
  if (request.expectedLastEntryId !== undefined && state.isStale(request.expectedLastEntryId)) {
    throw ApplicationFailure.nonRetryable(
      `expectedLastEntryId ${request.expectedLastEntryId} is stale: the session's last entry is ${state.lastEntryId}; reload and resend`,
      FailureTypes.StaleTurn,
    );
  }
}
