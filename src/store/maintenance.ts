import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import type { Database } from './schema';
import { countEntries, getEntry, lastCompaction } from './entries-repo';
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
  /** Entries kept per session, oldest removed first, within the rule below (OpenClaw: 500). */
  maxEntries: z.number().int().nonnegative().default(DEFAULTS.maxEntriesPerSession),
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

export interface CappedSession {
  agentId: string;
  sessionKey: string;
  sessionId: string;
  /** Entries removed (or that would be, in warn mode). */
  removed: number;
  /** Entries still above the cap because they are protected (active window, newest compaction, header). */
  keptOverCap: number;
}

/** What a run did (enforce) or would do (warn). */
export interface MaintenanceReport {
  mode: 'warn' | 'enforce';
  sessionsPruned: PrunedSession[];
  /** Rotated transcripts of keys that are kept (a pruned key takes all of its transcripts with it). */
  transcriptsPruned: PrunedTranscript[];
  /** Every transcript of a key is capped, the rotated ones too (`sessionId` says which). */
  entriesCapped: CappedSession[];
  /**
   * Entries an import wrote without their search index, indexed now (in both modes: indexing deletes
   * nothing and changes no answer, it only spares the session's first history_search the work).
   */
  entriesIndexed: number;
}

/**
 * Session maintenance (OpenClaw: prune sessions older than 30 days, cap at
 * 500 entries, warn or enforce), and the search index of imported entries. Meant to run from a
 * Temporal Schedule; `now` is injected.
 *
 * Pruning removes a session row with the transcripts of all its session ids and its compaction rows
 * (memory notes stay); a kept key's rotated transcript goes once its id ended before the limit.
 *
 * Capping never changes what the model sees: it only removes compacted-away history. An entry may
 * go when all of these hold: it is older than the newest `maxEntries` entries; it is before the
 * active window (the newest compaction's `firstKeptEntryId`, or that compaction when the id is
 * gone); it is not the newest compaction entry; it is not the session header. So a session without
 * any compaction is never capped (its whole transcript is the active window) and is reported with
 * `keptOverCap` instead.
 */
export async function runMaintenance(db: Kysely<Database>, options: MaintenanceOptions): Promise<MaintenanceReport> {
  const parsed = maintenanceOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidMaintenanceOptionsError(issue.path.join('.') || '(options)', issue.message);
  }
  const opts = parsed.data;
  const enforce = opts.mode === 'enforce';
  const report: MaintenanceReport = {
    mode: opts.mode,
    sessionsPruned: [],
    transcriptsPruned: [],
    entriesCapped: [],
    entriesIndexed: 0,
  };

  const pruned = new Set<string>();
  const prunedIds = new Set<string>();
  if (opts.pruneAfterDays > 0) {
    const before = new Date(opts.now.getTime() - opts.pruneAfterDays * DAY_MS);
    for (const s of await sessionsUpdatedBefore(db, before, opts.agentId)) {
      const entries = enforce
        ? await deleteSessionCascade(db, s.agent_id, s.session_key, s.session_id)
        : await countKeyEntries(db, s.agent_id, s.session_key, s.session_id);
      report.sessionsPruned.push({
        agentId: s.agent_id,
        sessionKey: s.session_key,
        sessionId: s.session_id,
        updatedAt: new Date(s.updated_at),
        entries,
      });
      pruned.add(`${s.agent_id}\u0000${s.session_key}`);
    }
    for (const t of await rotatedEndedBefore(db, before, opts.agentId)) {
      if (pruned.has(`${t.agent_id}\u0000${t.session_key}`)) continue;
      const entries = enforce
        ? await deleteRotatedTranscript(db, t.agent_id, t.session_id)
        : await countEntries(db, t.agent_id, t.session_id);
      report.transcriptsPruned.push({
        agentId: t.agent_id,
        sessionKey: t.session_key,
        sessionId: t.session_id,
        endedAt: new Date(t.ended),
        entries,
      });
      prunedIds.add(`${t.agent_id}\u0000${t.session_id}`);
    }
  }

  if (opts.maxEntries > 0) {
    for (const s of await sessionsOverCap(db, opts.maxEntries, opts.agentId)) {
      if (pruned.has(`${s.agent_id}\u0000${s.session_key}`) || prunedIds.has(`${s.agent_id}\u0000${s.session_id}`))
        continue;
      const capped = await capSession(db, s.agent_id, s.session_id, s.entries, opts.maxEntries, enforce);
      report.entriesCapped.push({ agentId: s.agent_id, sessionKey: s.session_key, sessionId: s.session_id, ...capped });
    }
  }
  // Last, so rows pruned above are not indexed first.
  report.entriesIndexed = await indexAllDeferredEntries(db, opts.agentId);
  return report;
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

/**
 * Transcripts with more than `max` entries: each key's current one and its rotated ones (its
 * session id history), in key order, oldest id first.
 */
async function sessionsOverCap(db: Kysely<Database>, max: number, agentId?: string) {
  const ids = db
    .selectFrom('sessions')
    .select(['agent_id', 'session_key', 'session_id'])
    .union(db.selectFrom('session_ids').select(['agent_id', 'session_key', 'session_id']));
  let q = db
    .selectFrom(ids.as('k'))
    .innerJoin('transcript_entries as e', (j) =>
      j.onRef('e.agent_id', '=', 'k.agent_id').onRef('e.session_id', '=', 'k.session_id'),
    )
    .select(['k.agent_id', 'k.session_key', 'k.session_id', sql<number>`count(*)::int`.as('entries')])
    .groupBy(['k.agent_id', 'k.session_key', 'k.session_id'])
    .having(sql`count(*)`, '>', max);
  if (agentId !== undefined) q = q.where('k.agent_id', '=', agentId);
  // A transcript's first seq is its start: older ids of a key come first.
  return q
    .orderBy('k.agent_id')
    .orderBy('k.session_key')
    .orderBy(sql`min(e.seq)`)
    .execute();
}

async function capSession(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  total: number,
  max: number,
  enforce: boolean,
): Promise<{ removed: number; keptOverCap: number }> {
  const compaction = await lastCompaction(db, agentId, sessionId);
  if (!compaction) return { removed: 0, keptOverCap: total - max };
  const firstKeptId = compaction.payload.firstKeptEntryId;
  const firstKept = firstKeptId ? await getEntry(db, agentId, sessionId, firstKeptId) : undefined;
  const activeStart = Math.min(Number(firstKept?.seq ?? compaction.seq), Number(compaction.seq));
  const tailStart = await db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'desc')
    .offset(max - 1)
    .limit(1)
    .executeTakeFirstOrThrow();
  const cutoff = Math.min(activeStart, Number(tailStart.seq));
  const removable = db
    .selectFrom('transcript_entries')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('seq', '<', cutoff)
    .where('type', '!=', 'session')
    .where('id', '!=', compaction.id);
  let removed: number;
  if (enforce) {
    const result = await db
      .deleteFrom('transcript_entries')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .where('seq', '<', cutoff)
      .where('type', '!=', 'session')
      .where('id', '!=', compaction.id)
      .executeTakeFirst();
    removed = Number(result.numDeletedRows);
  } else {
    removed = (await removable.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
  }
  return { removed, keptOverCap: Math.max(0, total - removed - max) };
}
