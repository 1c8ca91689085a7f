import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';
import { bytesVector, vectorBytes } from './vector-bytes';

/**
 * The vectors of memory notes (`memory_note_embeddings`), as `entry_embeddings` holds those of
 * transcript entries. Only plain notes are embedded: a note sealed at rest never gets a vector.
 * Every write is idempotent by (note, model).
 */

/** A plain note waiting for its vector under a model. */
export interface NoteToEmbed {
  readonly agentId: string;
  readonly noteId: string;
  readonly text: string;
}

/** The newest plain notes of `agentId` with no vector under `model`. */
export async function notesWithoutVectors(
  db: Kysely<Database>,
  opts: { readonly agentId: string; readonly model: string; readonly limit: number },
): Promise<NoteToEmbed[]> {
  const rows = await db
    .selectFrom('memory_notes as n')
    .select(['n.agent_id', 'n.id', 'n.text'])
    .where('n.agent_id', '=', opts.agentId)
    .where('n.text_terms', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('memory_note_embeddings as v')
            .select(sql`1`.as('one'))
            .whereRef('v.agent_id', '=', 'n.agent_id')
            .whereRef('v.note_id', '=', 'n.id')
            .where('v.model', '=', opts.model),
        ),
      ),
    )
    .orderBy('n.created_at', 'desc')
    .orderBy('n.id', 'desc')
    .limit(opts.limit)
    .execute();
  return rows.map((r) => ({ agentId: r.agent_id, noteId: r.id, text: r.text }));
}

/** Stores the notes' vectors; a note that has one under the model keeps it. An empty vector marks a note with no text. */
export async function writeNoteVectors(
  db: Kysely<Database>,
  model: string,
  rows: readonly { readonly note: NoteToEmbed; readonly vector: Float32Array }[],
): Promise<void> {
  if (rows.length === 0) return;
  const now = new Date();
  await db
    .insertInto('memory_note_embeddings')
    .values(
      rows.map(({ note, vector }) => ({
        agent_id: note.agentId,
        note_id: note.noteId,
        model,
        vector: vectorBytes(vector),
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['agent_id', 'model', 'note_id']).doNothing())
    .execute();
}

/** The vectors of `noteIds` under `model` (notes without one left out). */
export async function noteVectors(
  db: Kysely<Database>,
  opts: { readonly agentId: string; readonly model: string; readonly noteIds: readonly string[] },
): Promise<Map<string, Float32Array>> {
  if (opts.noteIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('memory_note_embeddings')
    .select(['note_id', 'vector'])
    .where('agent_id', '=', opts.agentId)
    .where('model', '=', opts.model)
    .where('note_id', 'in', opts.noteIds)
    .where(sql<boolean>`length(vector) > 0`)
    .execute();
  return new Map(rows.map((r) => [r.note_id, bytesVector(r.vector)]));
}
