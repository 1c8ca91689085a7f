/**
 * Turns a model-call error into the Temporal `ApplicationFailure` an activity throws: transient
 * failures retry (honouring `retry-after` as the next delay), request problems do not.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../protocol';
import {
  ContextOverflowError,
  ModelAuthError,
  ModelCallAbortedError,
  ModelConnectionError,
  ModelOverloadedError,
  ModelRateLimitedError,
  ModelRequestInvalidError,
  ModelServerError,
  ModelTimeoutError,
  ModelTruncatedResponseError,
  classifyModelError,
  type ModelError,
} from './errors';

/**
 * Failure `type` names of model calls, named as `FailureTypes` are (`Keel` and a PascalCase name);
 * the ones a workflow or client branches on are `FailureTypes`' own.
 */
export const MODEL_FAILURE_TYPES = {
  rateLimited: 'KeelModelRateLimited',
  overloaded: 'KeelModelOverloaded',
  serverError: 'KeelModelServerError',
  timeout: 'KeelModelTimeout',
  connection: 'KeelModelConnectionError',
  truncated: 'KeelModelTruncatedResponse',
  aborted: 'KeelModelCallAborted',
  /** Non-retryable: the turn answers it with overflow compaction, then retries once. */
  contextOverflow: FailureTypes.ContextOverflow,
  requestInvalid: FailureTypes.ModelRequestInvalid,
  auth: FailureTypes.ModelAuth,
  unexpected: 'KeelModelUnexpected',
} as const;

/** One of the `MODEL_FAILURE_TYPES` values. */
export type ModelFailureType = (typeof MODEL_FAILURE_TYPES)[keyof typeof MODEL_FAILURE_TYPES];

/** Structured facts carried in the failure's `details[0]`, readable by the workflow. */
export interface ModelFailureDetails {
  status: number | null;
  retryAfterMs: number | null;
  promptTokens: number | null;
  maxTokens: number | null;
  providerMessage: string | null;
}

function failureType(err: ModelError): ModelFailureType {
  if (err instanceof ModelRateLimitedError) return MODEL_FAILURE_TYPES.rateLimited;
  if (err instanceof ModelOverloadedError) return MODEL_FAILURE_TYPES.overloaded;
  if (err instanceof ModelServerError) return MODEL_FAILURE_TYPES.serverError;
  if (err instanceof ModelTimeoutError) return MODEL_FAILURE_TYPES.timeout;
  if (err instanceof ModelConnectionError) return MODEL_FAILURE_TYPES.connection;
  if (err instanceof ModelTruncatedResponseError) return MODEL_FAILURE_TYPES.truncated;
  if (err instanceof ModelCallAbortedError) return MODEL_FAILURE_TYPES.aborted;
  if (err instanceof ContextOverflowError) return MODEL_FAILURE_TYPES.contextOverflow;
  if (err instanceof ModelRequestInvalidError) return MODEL_FAILURE_TYPES.requestInvalid;
  if (err instanceof ModelAuthError) return MODEL_FAILURE_TYPES.auth;
  return MODEL_FAILURE_TYPES.unexpected;
}

/**
 * The `ApplicationFailure` for a model-call error (classified first with `classifyModelError`).
 * Rate limit, overload, 5xx, timeout, connection and truncation are retryable, with
 * `nextRetryDelay` = the provider's retry-after when it sent one; context overflow (type
 * `ContextOverflow`), invalid requests and auth are non-retryable with the fix in the message.
 * An `ApplicationFailure` passed in is returned unchanged.
 *
 * @example
 *   try { reply = await model.complete(request, { signal }) } catch (err) { throw toActivityFailure(err) }
 */
export function toActivityFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const modelError = classifyModelError(err);
  const retryAfterMs =
    'retryAfterMs' in modelError && typeof modelError.retryAfterMs === 'number' ? modelError.retryAfterMs : undefined;
  const details: ModelFailureDetails = {
    status: modelError.status ?? null,
    retryAfterMs: retryAfterMs ?? null,
    promptTokens: modelError instanceof ContextOverflowError ? (modelError.promptTokens ?? null) : null,
    maxTokens: modelError instanceof ContextOverflowError ? (modelError.maxTokens ?? null) : null,
    providerMessage: modelError.providerMessage ?? null,
  };
  return ApplicationFailure.create({
    message: modelError.message,
    type: failureType(modelError),
    nonRetryable: !modelError.retryable,
    details: [details],
    cause: modelError,
    ...(modelError.retryable && retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
  });
}
