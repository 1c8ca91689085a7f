import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import type { Database } from './schema';
import { countEntries } from './entries-repo';
import { deleteSessionCascade, sessionsUpdatedBefore } from './sessions-repo';
import { deleteRotatedTranscript } from './session-ids-repo';
import { indexAllDeferredEntries } from './deferred-search-index';

const DAY_MS = 86_400_000;

/**
 * Options of a maintenance run. `0` disables a rule (as OpenClaw's "0 disables" settings).
 * `warn` only reports; `enforce` deletes.
 */
export const maintenanceOptionsSchema = z.object({
  now: z.date(),
  mode: z.enum(['warn', 'enforce']).default('warn'),
  /** Sessions whose updated_at is older than this many days are pruned (OpenClaw: 30). */
  pruneAfterDays: z.number().int().nonnegative().default(DEFAULTS.pruneAfterDays),
  /** Sessions kept per agent, the least recently updated pruned first (OpenClaw's `maxEntries` of its store: 500). */
  maxSessions: z.number().int().nonnegative().default(DEFAULTS.maxSessionsPerAgent),
  /** Only this agent's sessions; all agents when absent. */
  agentId: z.string().min(1).optional(),
});
export type MaintenanceOptions = z.input<typeof maintenanceOptionsSchema>;

/** A maintenance option is out of range; `field` names it. */
export class InvalidMaintenanceOptionsError extends Error {
  override readonly name = 'InvalidMaintenanceOptionsError';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`maintenance option ${field}: ${problem}`);
  }
}

export interface PrunedSession {
  /** `age`: not updated for `pruneAfterDays`; `count`: beyond the agent's newest `maxSessions`. */
  reason: 'age' | 'count';
  agentId: string;
  sessionKey: string;
  sessionId: string;
  updatedAt: Date;
  /** Transcript entries deleted with it (or that would be, in warn mode). */
  entries: number;
}

/** A key's earlier (rotated) transcript whose session id ended before the prune limit. */
export interface PrunedTranscript {
  agentId: string;
  sessionKey: string;
  sessionId: string;
  endedAt: Date;
  /** Transcript entries deleted (or that would be, in warn mode). */
  entries: number;
}

/** What a run did (enforce) or would do (warn). */
export interface MaintenanceReport {
  mode: 'warn' | 'enforce';
  sessionsPruned: PrunedSession[];
  /** Rotated transcripts of keys that are kept (a pruned key takes all of its transcripts with it). */
  transcriptsPruned: PrunedTranscript[];
  /**
   * Entries an import wrote without their search index, indexed now (in both modes: indexing deletes
   * nothing and changes no answer, it only spares the session's first history_search the work).
   */
  entriesIndexed: number;
}

/**
 * Session maintenance (OpenClaw: prune sessions older than 30 days, keep at most 500 sessions per
 * agent, warn or enforce), and the search index of imported entries. Meant to run from a Temporal
 * Schedule; `now` is injected.
 *
 * Pruning removes a session row with the transcripts of all its session ids and its compaction rows
 * (memory notes stay); a kept key's rotated transcript goes once its id ended before the limit. A
 * kept session's transcript is never cut: `history_search`, `history_expand` and compaction revert
 * read its summarized history.
 *
 * Enforce plans first and hands the plan (what it is about to delete) to `beforeDelete`, which
 * reports it, then deletes exactly that; warn returns the same plan and deletes nothing.
 */
export async function runMaintenance(
  db: Kysely<Database>,
  options: MaintenanceOptions,
  beforeDelete?: (plan: MaintenanceReport) => void | Promise<void>,
): Promise<MaintenanceReport> {
  const parsed = maintenanceOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidMaintenanceOptionsError(issue.path.join('.') || '(options)', issue.message);
  }
  const opts = parsed.data;
  const plan = await planMaintenance(db, opts);
  if (opts.mode === 'enforce') {
    await beforeDelete?.(plan);
    for (const s of plan.sessionsPruned)
      s.entries = await deleteSessionCascade(db, s.agentId, s.sessionKey, s.sessionId);
    for (const t of plan.transcriptsPruned) t.entries = await deleteRotatedTranscript(db, t.agentId, t.sessionId);
  }
  // Last, so rows pruned above are not indexed first.
  plan.entriesIndexed = await indexAllDeferredEntries(db, opts.agentId);
  return plan;
}

/** What a run would delete: old sessions, then those beyond the count, then old rotated transcripts of kept keys. */
async function planMaintenance(
  db: Kysely<Database>,
  opts: z.output<typeof maintenanceOptionsSchema>,
): Promise<MaintenanceReport> {
  const plan: MaintenanceReport = { mode: opts.mode, sessionsPruned: [], transcriptsPruned: [], entriesIndexed: 0 };
  const pruned = new Set<string>();
  const prune = async (reason: PrunedSession['reason'], s: SessionRow) => {
    if (pruned.has(`${s.agent_id}\u0000${s.session_key}`)) return;
    pruned.add(`${s.agent_id}\u0000${s.session_key}`);
    plan.sessionsPruned.push({
      reason,
      agentId: s.agent_id,
      sessionKey: s.session_key,
      sessionId: s.session_id,
      updatedAt: new Date(s.updated_at),
      entries: await countKeyEntries(db, s.agent_id, s.session_key, s.session_id),
    });
  };
  const before = new Date(opts.now.getTime() - opts.pruneAfterDays * DAY_MS);
  if (opts.pruneAfterDays > 0)
    for (const s of await sessionsUpdatedBefore(db, before, opts.agentId)) await prune('age', s);
  if (opts.maxSessions > 0)
    for (const s of await sessionsBeyondCount(db, opts.maxSessions, opts.agentId)) await prune('count', s);
  if (opts.pruneAfterDays > 0) {
    for (const t of await rotatedEndedBefore(db, before, opts.agentId)) {
      if (pruned.has(`${t.agent_id}\u0000${t.session_key}`)) continue;
      plan.transcriptsPruned.push({
        agentId: t.agent_id,
        sessionKey: t.session_key,
        sessionId: t.session_id,
        endedAt: new Date(t.ended),
        entries: await countEntries(db, t.agent_id, t.session_id),
      });
    }
  }
  return plan;
}

type SessionRow = Awaited<ReturnType<typeof sessionsUpdatedBefore>>[number];

/** Each agent's sessions past its newest `max` (by last update), least recently updated first. */
async function sessionsBeyondCount(db: Kysely<Database>, max: number, agentId?: string): Promise<SessionRow[]> {
  let ranked = db
    .selectFrom('sessions')
    .select([
      'agent_id',
      'session_key',
      'session_id',
      'updated_at',
      sql<number>`row_number() over (partition by agent_id order by updated_at desc, session_key desc)`.as('rank'),
    ]);
  if (agentId !== undefined) ranked = ranked.where('agent_id', '=', agentId);
  const rows = await db
    .selectFrom(ranked.as('r'))
    .select(['agent_id', 'session_key', 'session_id', 'updated_at'])
    .where('rank', '>', max)
    .orderBy('agent_id')
    .orderBy('updated_at')
    .orderBy('session_key')
    .execute();
  return rows as SessionRow[];
}

/** Entries of every transcript of the key (the current one, and the rotated ones in its history). */
async function countKeyEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  sessionId: string,
): Promise<number> {
  const row = await db
    .selectFrom('transcript_entries')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('agent_id', '=', agentId)
    .where((eb) =>
      eb.or([
        eb('session_id', '=', sessionId),
        eb(
          'session_id',
          'in',
          eb
            .selectFrom('session_ids')
            .select('session_id')
            .where('agent_id', '=', agentId)
            .where('session_key', '=', sessionKey),
        ),
      ]),
    )
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Rotated session ids (no longer their key's current one) that ended before `before`, oldest first. */
async function rotatedEndedBefore(db: Kysely<Database>, before: Date, agentId?: string) {
  let q = db
    .selectFrom('session_ids as h')
    .leftJoin('sessions as s', (j) =>
      j.onRef('s.agent_id', '=', 'h.agent_id').onRef('s.session_key', '=', 'h.session_key'),
    )
    .select(['h.agent_id', 'h.session_key', 'h.session_id', sql<Date>`coalesce(h.ended_at, h.started_at)`.as('ended')])
    .where((eb) => eb.or([eb('s.session_id', 'is', null), eb('s.session_id', '!=', eb.ref('h.session_id'))]))
    .where(sql<boolean>`coalesce(h.ended_at, h.started_at) < ${before}`);
  if (agentId !== undefined) q = q.where('h.agent_id', '=', agentId);
  return q
    .orderBy(sql`coalesce(h.ended_at, h.started_at)`)
    .orderBy('h.session_id')
    .execute();
}
