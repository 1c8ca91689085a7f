/**
 * Problem details (RFC 9457) for every error the HTTP API answers: a `type` URN, the status, a detail
 * that says what to fix, and the `field` at fault. `problemFor` maps Keel's typed errors to them.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isGrpcServiceError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { KeelRequestError } from '../sessions/validate-request';
import { InvalidSessionKeyError } from '../sessions/errors';
import { OperationError, type OperationErrorKind } from '../operations/errors';
import { classifyDbError } from '../store/db-errors';
import { UnreachableDependencyError, unreachable, type Dependency } from '../runtime/reach';
import { FailureTypes } from '../protocol';
import type { problem } from './response-schemas';

/** One problem-details body. */
export type Problem = z.output<typeof problem>;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** An error the API answers as it is: status, kind (the `type` URN's last part), detail and field. */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly kind: string,
    detail: string,
    readonly field?: string,
    readonly failureType?: string,
  ) {
    super(detail);
  }

  /** The RFC 9457 body. */
  toJSON(): Problem {
    return {
      type: `urn:keel:problem:${this.kind}`,
      title: TITLES[this.status] ?? 'Error',
      status: this.status,
      detail: this.message,
      ...(this.field ? { field: this.field } : {}),
      ...(this.failureType ? { failureType: this.failureType } : {}),
    };
  }
}

/** Sends `p` as `application/problem+json`. */
export function problemResponse(c: Context, p: ApiProblem): Response {
  return c.body(JSON.stringify(p.toJSON()), p.status, { 'content-type': 'application/problem+json' });
}

/** The first zod issue of a bad request as a problem: 413 when a string is over its size limit, else 400. */
export function invalidRequest(error: z.ZodError, where: 'body' | 'query' | 'path' | 'header'): ApiProblem {
  const issue = error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : where;
  const detail = issue.message.startsWith(`${field}:`) ? issue.message : `${field}: ${issue.message}`;
  if (issue.code === 'too_big' && issue.origin === 'string') return new ApiProblem(413, 'too-large', detail, field);
  return new ApiProblem(400, 'invalid-request', detail, field);
}

/** The status of each kind of operation error: the one table from operation errors to HTTP. */
const STATUS_OF_KIND: Record<OperationErrorKind, ContentfulStatusCode> = {
  'unknown-session': 404,
  'not-found': 404,
  busy: 409,
  invalid: 400,
  unavailable: 503,
};

/** Where the server's dependencies are, for the 503 detail. */
export interface Dependencies {
  readonly temporal: Dependency;
  readonly database: Dependency;
}

/** Any error a route throws, as the problem to answer; an unknown error is a 500 that names it. */
export function problemFor(err: unknown, deps: Dependencies): ApiProblem {
  if (err instanceof ApiProblem) return err;
  if (err instanceof InvalidSessionKeyError)
    return new ApiProblem(400, 'invalid-session-key', err.message, 'sessionKey');
  if (err instanceof KeelRequestError) {
    if (err.field === 'KEEL_ALLOWED_AGENTS') return new ApiProblem(403, 'agent-not-allowed', err.message, 'sessionKey');
    return new ApiProblem(400, 'invalid-request', err.message, err.field);
  }
  if (err instanceof OperationError)
    return new ApiProblem(STATUS_OF_KIND[err.kind], err.problem, err.message, err.field);
  if (err instanceof UnreachableDependencyError)
    return new ApiProblem(STATUS_OF_KIND.unavailable, 'unavailable', err.message);
  if (temporalUnreachable(err)) return new ApiProblem(503, 'unavailable', unreachable(deps.temporal, err).message);
  if (classifyDbError(err) === 'transient')
    return new ApiProblem(503, 'unavailable', unreachable(deps.database, err).message);
  const failure = requestFailure(err);
  if (failure) {
    const status = failure.type === FailureTypes.AgentNotAllowed ? 403 : 502;
    return new ApiProblem(status, 'request-failed', failure.message, undefined, failure.type);
  }
  return new ApiProblem(500, 'internal', `the server failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** gRPC UNAVAILABLE (14) or DEADLINE_EXCEEDED (4) anywhere in the cause chain: Temporal did not answer. */
function temporalUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && (e.code === 14 || e.code === 4)) return true;
  }
  return false;
}

/** A request the session settled as failed: the client throws it as an `ApplicationFailure` with a Keel failure type. */
function requestFailure(err: unknown): { type: string; message: string } | undefined {
  return err instanceof ApplicationFailure && err.type ? { type: err.type, message: err.message } : undefined;
}
