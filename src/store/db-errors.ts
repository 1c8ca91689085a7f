/**
 * Classifies errors from pg and PGlite by SQLSTATE, so a data error is never retried forever:
 * connection loss, shutdowns, serialization failures and exhausted resources are transient (retry);
 * data exceptions, integrity violations and syntax/undefined-object errors are permanent (the same
 * write fails the same way every time).
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../protocol';

/** Retrying may help, retrying cannot help, or the error is not a database error we recognise. */
export type DbErrorKind = 'transient' | 'permanent' | 'unknown';

/** The fields pg's and PGlite's DatabaseError share (both name the SQLSTATE `code`). */
interface DatabaseErrorFields {
  code?: unknown;
  table?: unknown;
  column?: unknown;
  constraint?: unknown;
  detail?: unknown;
  message?: unknown;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
// Node socket errors while talking to the server (pg surfaces them unwrapped).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
// pg's messages when the server goes away mid-query; these errors carry no code.
const CONNECTION_MESSAGES = /Connection terminated|Client has encountered a connection error|connection timeout/i;

/** transient, permanent or unknown; see the module comment for the classes. */
export function classifyDbError(err: unknown): DbErrorKind {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') break;
    const code = (e as DatabaseErrorFields).code;
    if (typeof code === 'string' && SOCKET_CODES.has(code)) return 'transient';
    if (typeof code === 'string' && SQLSTATE.test(code)) return classifySqlState(code);
    const message = (e as DatabaseErrorFields).message;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return 'transient';
  }
  return 'unknown';
}

/** One SQLSTATE's kind. */
export function classifySqlState(code: string): DbErrorKind {
  const cls = code.slice(0, 2);
  if (cls === '08' || cls === '53') return 'transient'; // connection exception, insufficient resources
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'transient'; // admin/crash shutdown, cannot connect now
  if (code === '40001' || code === '40P01') return 'transient'; // serialization failure, deadlock
  if (cls === '22' || cls === '23' || cls === '42') return 'permanent'; // data, integrity, syntax or undefined object
  return 'unknown';
}

/**
 * A permanent database error as a non-retryable `KeelDataError` failure whose message names the
 * operation, the table/column/constraint when the server reported them, and what to do; undefined
 * for any other error (the caller rethrows it and Temporal retries).
 * @example throw dataFailure(err, 'activity beginTurn') ?? err;
 */
export function dataFailure(err: unknown, operation: string): ApplicationFailure | undefined {
  if (classifyDbError(err) !== 'permanent') return undefined;
  const e = databaseError(err)!;
  const code = String(e.code);
  const where = [
    str(e.table) && `table ${str(e.table)}`,
    str(e.column) && `column ${str(e.column)}`,
    str(e.constraint) && `constraint ${str(e.constraint)}`,
  ]
    .filter(Boolean)
    .join(', ');
  const message = `${operation}: the database rejected the data (SQLSTATE ${code}: ${str(e.message)}${where ? `; ${where}` : ''}); retrying cannot fix it — ${fixFor(code)}`;
  return ApplicationFailure.create({
    message,
    type: FailureTypes.DataError,
    nonRetryable: true,
    details: [
      {
        sqlState: code,
        operation,
        table: str(e.table) ?? null,
        column: str(e.column) ?? null,
        constraint: str(e.constraint) ?? null,
      },
    ],
    ...(err instanceof Error ? { cause: err } : {}),
  });
}

function fixFor(code: string): string {
  if (code === '22P05' || code === '22021')
    return 'text with NUL or a lone surrogate reached a write that did not make it storable; report it as a Keel bug';
  if (code.startsWith('22'))
    return 'a value does not fit its column (type, range or format); check the input named above';
  if (code.startsWith('23')) return 'the row conflicts with existing data; check the ids and keys of the request';
  return 'the schema does not match this Keel version; run `keel migrate`';
}

function databaseError(err: unknown): DatabaseErrorFields | undefined {
  for (
    let e: unknown = err, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as DatabaseErrorFields).code;
    if (typeof code === 'string' && SQLSTATE.test(code)) return e as DatabaseErrorFields;
  }
  return undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
