import type { Kysely } from 'kysely';
import type { Database, MemoryNoteRow } from './schema';
import { storableText } from '../text/storable-text';

export interface RecordMemoryFlushInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly flushId: string;
  readonly now: string;
  /** The compaction count this flush belongs to (once per cycle). */
  readonly cycle: number;
  readonly notes: readonly string[];
}

/**
 * Writes a flush's notes (made storable: NUL and lone surrogates become U+FFFD) and marks the cycle
 * flushed, in one transaction; note ids make it idempotent.
 */
export async function recordMemoryFlush(db: Kysely<Database>, input: RecordMemoryFlushInput): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (input.notes.length > 0) {
      await trx
        .insertInto('memory_notes')
        .values(
          input.notes.map((text, i) => ({
            id: `${input.flushId}:${i}`,
            agent_id: input.agentId,
            session_key: input.sessionKey,
            session_id: input.sessionId,
            day: input.now.slice(0, 10),
            text: storableText(text),
            compaction_cycle: input.cycle,
            created_at: input.now,
          })),
        )
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    }
    await trx
      .updateTable('sessions')
      .set({ memory_flush_at: input.now, memory_flush_compaction_count: input.cycle, memory_flush_error: null, updated_at: input.now })
      .where('agent_id', '=', input.agentId)
      .where('session_key', '=', input.sessionKey)
      .execute();
  });
}

/** Records why a memory flush failed; the next successful flush clears it. */
export async function recordMemoryFlushFailure(db: Kysely<Database>, agentId: string, sessionKey: string, error: string, now: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ memory_flush_error: error.slice(0, 2_000), memory_flush_failed_at: now })
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .execute();
}

/** An agent's notes, newest first (scoped by agent). */
export async function listMemoryNotes(db: Kysely<Database>, agentId: string, limit = 100): Promise<MemoryNoteRow[]> {
  return db.selectFrom('memory_notes').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').limit(limit).execute();
}
