import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { checkModelDimensions, EmbeddingDimensionsError } from '../store/embeddings-repo';
import { writeNoteVectors, type NoteToEmbed } from '../store/note-embeddings-repo';
import { DEFAULTS } from '../config/defaults';
import type { Embedder } from './embedder';

/**
 * Embeds memory notes and stores their vectors, as {@link embedEntries} does entries: bounded text,
 * the model's dimensions checked before anything is written, a note with no text stored with an
 * empty vector so it is never picked again. Idempotent by note.
 */
export async function embedNotes(
  db: Kysely<Database>,
  embedder: Embedder,
  notes: readonly NoteToEmbed[],
): Promise<void> {
  const texts = notes.map((n) => n.text.trim().slice(0, DEFAULTS.embeddingsMaxChars));
  const wanted = notes.flatMap((note, i) => (texts[i] ? [{ note, text: texts[i] }] : []));
  const vectors = await embedder.embed(wanted.map((w) => w.text));
  if (vectors.length > 0) await checkModelDimensions(db, embedder.model, vectors[0]!.length);
  const odd = vectors.find((v) => v.length !== vectors[0]!.length);
  if (odd) throw new EmbeddingDimensionsError(embedder.model, vectors[0]!.length, odd.length);
  const byNote = new Map(wanted.map((w, i) => [w.note, vectors[i]!]));
  await writeNoteVectors(
    db,
    embedder.model,
    notes.map((note) => ({ note, vector: byNote.get(note) ?? new Float32Array(0) })),
  );
}
