/**
 * Sessions over time (OpenClaw's session ids: reset, daily reset, idle expiry): when a session key gets a new
 * sessionId. Pure and deterministic: the current time and the id generator are passed in, so
 * workflow code may call these with `workflow` time and `uuid4()`.
 *
 * Rules:
 * - `/new` and `/reset` start a new sessionId; text after the command is the first message.
 * - daily reset (default 04:00 local): a session that started before the most recent boundary is
 *   stale. OpenClaw measures it from `sessionStartedAt` ("daily reset freshness uses this"), not
 *   from `lastInteractionAt`; both agree in practice because every new message after the boundary
 *   resets, but the start time is the one OpenClaw names.
 * - idle expiry (`idleMinutes`, unset disables): stale when now − lastInteractionAt > idleMinutes;
 *   a session with no interaction yet is measured from its start.
 * - both configured: whichever expired first is the reason (ties go to daily, as OpenClaw).
 * - system events (heartbeat, cron wakeups, exec notices, bookkeeping) never refresh freshness.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import { InvalidTimeZoneError } from './errors';

/**
 * Zone of the daily boundary when none is configured. OpenClaw uses the gateway host's zone;
 * Keel's workers may run in different zones, so the default is fixed (Keel; move to defaults.ts).
 */
export const DEFAULT_RESET_TIME_ZONE = DEFAULTS.resetTimeZone;

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

/**
 * How sessions of a key expire: `daily` (default; plus idle when `idleMinutes` is set), `idle`
 * (idle only; needs `idleMinutes`), `none` (only `/new` or `/reset`). Parse config with it.
 */
export const sessionResetPolicySchema = z
  .object({
    mode: z.enum(['daily', 'idle', 'none']).default('daily'),
    dailyResetHour: z.number().int().min(0).max(23).default(DEFAULTS.dailyResetHour),
    timeZone: z
      .string()
      .refine(isKnownTimeZone, { message: 'not a known IANA time zone; use a name such as "Europe/Berlin" or "UTC"' })
      .default(DEFAULT_RESET_TIME_ZONE),
    idleMinutes: z.number().int().positive().optional(),
  })
  .refine((policy) => policy.mode !== 'idle' || policy.idleMinutes !== undefined, {
    message: 'mode "idle" needs idleMinutes',
    path: ['idleMinutes'],
  });

/** A reset policy as written in config (defaults not yet applied). */
export type SessionResetPolicyInput = z.input<typeof sessionResetPolicySchema>;

/** The timestamps freshness is measured from (the `sessions` row). */
export interface SessionTimes {
  readonly sessionStartedAt: Date;
  /** Last real user/channel interaction; null or absent before the first one. */
  readonly lastInteractionAt?: Date | null | undefined;
}

/** Why a session is no longer fresh. */
export type StaleReason = 'daily' | 'idle' | 'manual';

/** The verdict, with the boundaries that were checked so callers can show them. */
export interface Freshness {
  readonly fresh: boolean;
  /** Set when `fresh` is false. */
  readonly reason?: StaleReason;
  /** The most recent daily boundary (mode `daily` only). */
  readonly dailyResetAt?: Date;
  /** When the idle window ends (when `idleMinutes` is set). */
  readonly idleExpiresAt?: Date;
}

/**
 * Decides whether the current sessionId of a key may continue at `now`.
 * `resetRequested` (a `/new` or `/reset`) makes it stale with reason `manual`.
 * Timestamps after `now` (clock skew between workers) count as `now`.
 * Throws `InvalidTimeZoneError` for an unknown zone.
 *
 * @example
 * evaluateFreshness({ sessionStartedAt: new Date('2025-03-29T20:00:00Z') },
 *   { now: new Date('2025-03-30T02:30:00Z'), policy: { timeZone: 'Europe/Berlin' } })
 * // { fresh: false, reason: 'daily', dailyResetAt: 2025-03-30T02:00:00Z (04:00 CEST) }
 */
export function evaluateFreshness(
  session: SessionTimes,
  options: { readonly now: Date; readonly policy: SessionResetPolicyInput; readonly resetRequested?: boolean },
): Freshness {
  const { now, policy } = options;
  const mode = policy.mode ?? 'daily';
  const nowMs = now.getTime();
  const startedMs = Math.min(session.sessionStartedAt.getTime(), nowMs);
  const interactionMs = Math.min(session.lastInteractionAt?.getTime() ?? startedMs, nowMs);

  const dailyResetAt =
    mode === 'daily'
      ? mostRecentDailyReset(
          now,
          policy.dailyResetHour ?? DEFAULTS.dailyResetHour,
          policy.timeZone ?? DEFAULT_RESET_TIME_ZONE,
        )
      : undefined;
  const idleExpiresAt =
    mode !== 'none' && policy.idleMinutes !== undefined && policy.idleMinutes > 0
      ? new Date(interactionMs + policy.idleMinutes * MS_PER_MINUTE)
      : undefined;
  const boundaries = { ...(dailyResetAt && { dailyResetAt }), ...(idleExpiresAt && { idleExpiresAt }) };

  if (options.resetRequested) return { fresh: false, reason: 'manual', ...boundaries };
  const staleDaily = dailyResetAt !== undefined && startedMs < dailyResetAt.getTime();
  const staleIdle = idleExpiresAt !== undefined && nowMs > idleExpiresAt.getTime();
  if (staleDaily && staleIdle) {
    const reason = dailyResetAt.getTime() <= idleExpiresAt.getTime() ? 'daily' : 'idle';
    return { fresh: false, reason, ...boundaries };
  }
  if (staleDaily) return { fresh: false, reason: 'daily', ...boundaries };
  if (staleIdle) return { fresh: false, reason: 'idle', ...boundaries };
  return { fresh: true, ...boundaries };
}

/**
 * The most recent instant at or before `now` when the wall clock in `timeZone` showed
 * `hour`:00. On a day when that wall time does not exist (spring-forward gap) the boundary is
 * the first instant after the gap; when it exists twice (fall-back) it is the first of the two
 * (the "compatible" disambiguation of the TC39 Temporal proposal).
 */
export function mostRecentDailyReset(now: Date, hour: number, timeZone: string): Date {
  const nowMs = now.getTime();
  const today = new Date(wallClockMs(nowMs, timeZone));
  const boundaryOn = (dayOffset: number) =>
    wallClockToInstant(
      Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + dayOffset, hour),
      timeZone,
    );
  const todays = boundaryOn(0);
  return new Date(todays <= nowMs ? todays : boundaryOn(-1));
}

/** True when the runtime's Intl database knows `timeZone` (an IANA name such as `Europe/Berlin`). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch (error) {
    if (error instanceof InvalidTimeZoneError) return false;
    throw error;
  }
}

/** A parsed reset command: which one, and the text after it (the new session's first message). */
export interface ResetCommand {
  readonly command: '/new' | '/reset';
  /** Text after the command, trimmed; undefined when the command was sent alone. */
  readonly remainder?: string;
}

/**
 * Reads `/new` or `/reset` at the start of a message (exact, lowercase, followed by whitespace or
 * the end). OpenClaw passes the rest of the message through as the first message of the new
 * session; a bare command is answered with a short greeting turn by the caller.
 *
 * @example
 * parseResetCommand('/new summarize the report') // { command: '/new', remainder: 'summarize the report' }
 * parseResetCommand('/newsletter')               // undefined
 */
export function parseResetCommand(text: string): ResetCommand | undefined {
  const match = /^\s*(\/new|\/reset)(?=\s|$)([\s\S]*)$/.exec(text);
  if (!match) return undefined;
  const remainder = match[2].trim();
  return { command: match[1] as ResetCommand['command'], ...(remainder && { remainder }) };
}

/** Events that reach a session; only `user_message` (a real user or channel message) is an interaction. */
/** `subagent_announce`: a child's result reaching its parent (a system event: it keeps nothing fresh). */
export type SessionEventKind =
  'user_message' | 'heartbeat' | 'cron' | 'exec_notice' | 'bookkeeping' | 'subagent_announce';

const SYSTEM_EVENT_KINDS: ReadonlySet<SessionEventKind> = new Set([
  'heartbeat',
  'cron',
  'exec_notice',
  'bookkeeping',
  'subagent_announce',
]);

/** True for events that may change the session row but must not keep it fresh (as OpenClaw). */
export function isSystemEvent(kind: SessionEventKind): boolean {
  return SYSTEM_EVENT_KINDS.has(kind);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building them is slow, and the zone list is small. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch (error) {
      if (error instanceof RangeError) throw new InvalidTimeZoneError(timeZone);
      throw error;
    }
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock time in `timeZone` at `instantMs`, encoded as if it were a UTC time. */
function wallClockMs(instantMs: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(instantMs)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const wholeSeconds = Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second);
  return wholeSeconds + (((instantMs % 1000) + 1000) % 1000);
}

/**
 * The instant when `timeZone` shows the wall time `wallMs` (encoded as UTC). The offsets a day
 * before and after bracket any transition near it: zones change offset at most once a day.
 */
function wallClockToInstant(wallMs: number, timeZone: string): number {
  const offsetBefore = wallClockMs(wallMs - MS_PER_DAY, timeZone) - (wallMs - MS_PER_DAY);
  const offsetAfter = wallClockMs(wallMs + MS_PER_DAY, timeZone) - (wallMs + MS_PER_DAY);
  const matches = [wallMs - offsetBefore, wallMs - offsetAfter].filter((t) => wallClockMs(t, timeZone) === wallMs);
  if (matches.length > 0) return Math.min(...matches);
  // In a spring-forward gap: keep the earlier offset, which lands just past the gap.
  return wallMs - offsetBefore;
}
