import type { Kysely } from 'kysely';
import type { Database } from './schema';
import { storableText } from '../text/storable-text';
import type { MemoryCheckpoint } from '../context/prompt-sections';
import { atRestOf } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';

export interface RecordMemoryFlushInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly flushId: string;
  readonly now: string;
  /** The compaction count this flush belongs to (once per cycle). */
  readonly cycle: number;
  readonly notes: readonly string[];
  /** The notes' day (YYYY-MM-DD in the user's time zone); default the UTC day of `now`. */
  readonly day?: string;
  /** The structured checkpoint; the session's previous one is removed either way (one per cycle). */
  readonly checkpoint?: MemoryCheckpoint;
}

/**
 * Writes a flush's notes (made storable: NUL and lone surrogates become U+FFFD) and marks the cycle
 * flushed, in one transaction; note ids make it idempotent.
 */
export async function recordMemoryFlush(db: Kysely<Database>, input: RecordMemoryFlushInput): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const atRest = atRestOf(trx);
    if (input.notes.length > 0) {
      await trx
        .insertInto('memory_notes')
        .values(
          input.notes.map((note, i) => {
            const text = storableText(note);
            const id = `${input.flushId}:${i}`;
            // Sealed at rest with its blind index (search cannot read ciphertext); plain: no index, ILIKE.
            return {
              id,
              agent_id: input.agentId,
              session_key: input.sessionKey,
              session_id: input.sessionId,
              day: input.day ?? input.now.slice(0, 10),
              text: atRest.text(text, sealedRow.noteText(input.agentId, id)),
              text_terms: atRest.index(text),
              compaction_cycle: input.cycle,
              created_at: input.now,
            };
          }),
        )
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    }
    await trx
      .deleteFrom('memory_checkpoints')
      .where('agent_id', '=', input.agentId)
      .where('session_key', '=', input.sessionKey)
      .execute();
    if (input.checkpoint) {
      await trx
        .insertInto('memory_checkpoints')
        .values({
          agent_id: input.agentId,
          session_key: input.sessionKey,
          session_id: input.sessionId,
          compaction_cycle: input.cycle,
          flush_id: input.flushId,
          checkpoint: atRest.json(
            JSON.parse(
              JSON.stringify(input.checkpoint, (_k, v: unknown) => (typeof v === 'string' ? storableText(v) : v)),
            ),
            sealedRow.checkpoint(input.agentId, input.sessionKey, input.flushId),
          ),
          created_at: input.now,
        })
        .execute();
    }
    await trx
      .updateTable('sessions')
      .set({
        memory_flush_at: input.now,
        memory_flush_compaction_count: input.cycle,
        memory_flush_error: null,
        updated_at: input.now,
      })
      .where('agent_id', '=', input.agentId)
      .where('session_key', '=', input.sessionKey)
      .execute();
  });
}

/** Records why a memory flush failed; the next successful flush clears it. */
export async function recordMemoryFlushFailure(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  error: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ memory_flush_error: error.slice(0, 2_000), memory_flush_failed_at: now })
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .execute();
}

/**
 * The checkpoint to show now: saved by the flush of the cycle that the last compaction closed
 * (session compaction count = its cycle + 1) in the current sessionId. Later compactions hide it;
 * the next cycle's flush deletes it.
 */
export async function currentCheckpoint(
  db: Kysely<Database>,
  session: { agentId: string; sessionKey: string; sessionId: string; compactionCount: number },
): Promise<MemoryCheckpoint | undefined> {
  const row = await db
    .selectFrom('memory_checkpoints')
    // The key columns with the checkpoint: a value sealed at rest opens only in its own row.
    .select(['agent_id', 'session_key', 'flush_id', 'checkpoint'])
    .where('agent_id', '=', session.agentId)
    .where('session_key', '=', session.sessionKey)
    .where('session_id', '=', session.sessionId)
    .where('compaction_cycle', '=', session.compactionCount - 1)
    .executeTakeFirst();
  return row ? (row.checkpoint as MemoryCheckpoint) : undefined;
}

/** The day of the notes the flush of `cycle` wrote in this sessionId (undefined when it wrote none). */
export async function flushNotesDay(
  db: Kysely<Database>,
  session: { agentId: string; sessionId: string; cycle: number },
): Promise<string | undefined> {
  const row = await db
    .selectFrom('memory_notes')
    .select('day')
    .where('agent_id', '=', session.agentId)
    .where('session_id', '=', session.sessionId)
    .where('compaction_cycle', '=', session.cycle)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.day;
}

export interface FoundNote {
  readonly day: string;
  readonly text: string;
}

/** One of an agent's notes as memory search reads it. */
export interface StoredNote extends FoundNote {
  readonly id: string;
}

/**
 * An agent's newest notes, at most `limit`, newest first; notes sealed at rest are opened (the
 * worker holds the keys), so they are ranked as plain ones are.
 */
export async function newestNotes(db: Kysely<Database>, agentId: string, limit: number): Promise<StoredNote[]> {
  return (
    db
      .selectFrom('memory_notes')
      // The key columns with the text: a note sealed at rest opens only in its own row.
      .select(['agent_id', 'id', 'day', 'text'])
      .where('agent_id', '=', agentId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
      .then((rows) => rows.map(({ id, day, text }) => ({ id, day, text })))
  );
}
