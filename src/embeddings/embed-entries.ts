import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import {
  checkModelDimensions,
  EmbeddingDimensionsError,
  writeVectors,
  type EntryToEmbed,
} from '../store/embeddings-repo';
import { entrySearchText, isRecallEcho } from '../store/entry-search-text';
import { DEFAULTS } from '../config/defaults';
import type { Embedder } from './embedder';

/**
 * Embeds entries and stores their vectors: the text `history_search` matches, bounded, after the
 * question it answers when the message before it asks one; an entry with none (a recall echo, an
 * answer written from one, a bare tool call) is stored with an empty vector so it is never picked again.
 * The first answer records the model's dimensions; an answer of another size is refused before
 * anything is written. Idempotent by entry: a second run over the same entries writes nothing.
 */
export async function embedEntries(
  db: Kysely<Database>,
  embedder: Embedder,
  entries: readonly EntryToEmbed[],
): Promise<void> {
  const texts = entries.map(embeddedText);
  const wanted = entries.flatMap((entry, i) => (texts[i] ? [{ entry, text: texts[i] }] : []));
  const vectors = await embedder.embed(wanted.map((w) => w.text));
  if (vectors.length > 0) await checkModelDimensions(db, embedder.model, vectors[0]!.length);
  const odd = vectors.find((v) => v.length !== vectors[0]!.length);
  if (odd) throw new EmbeddingDimensionsError(embedder.model, vectors[0]!.length, odd.length);
  const byEntry = new Map(wanted.map((w, i) => [w.entry, vectors[i]!]));
  await writeVectors(
    db,
    embedder.model,
    entries.map((entry) => ({ entry, vector: byEntry.get(entry) ?? new Float32Array(0) })),
  );
}

/**
 * What is embedded of an entry: its text, after the question it answers when the message before it
 * asks one (the answer "lemon tarts" is found by "what did she bake for the fair?"). Bounded.
 */
function embeddedText(e: EntryToEmbed): string {
  // An answer written from a search quotes what it found: an echo, as the search's result is.
  if (isRecallEcho(e.entry) || (e.previous && isRecallEcho(e.previous))) return '';
  const text = entrySearchText(e.entry).trim();
  if (!text) return '';
  const asked = e.previous && !isRecallEcho(e.previous) ? entrySearchText(e.previous).trim() : '';
  const question = asked.includes('?') ? `${asked.slice(-DEFAULTS.embeddingsQuestionChars)}\n` : '';
  return `${question}${text}`.slice(0, DEFAULTS.embeddingsMaxChars);
}
