import type { Kysely } from 'kysely';
import type { Database } from './schema';
import { newestNotes, type FoundNote } from './memory-repo';
import { noteVectors } from './note-embeddings-repo';
import { rankTexts } from '../text/rank-texts';
import { DEFAULTS } from '../config/defaults';
import { fuseRankings, type Ranked } from '../embeddings/rank-fusion';
import { denseQueryText } from '../embeddings/dense-query';
import { DEFAULT_FUSION, type DenseSearch } from './history-search';

/**
 * `memory_search`'s ranking: the retriever `history_search` uses, over an agent's memory notes and
 * the workspace's memory lines. Keywords rank by BM25 over the same stemmed terms; with an embedder,
 * the notes' vectors rank by cosine and both are fused by rank, the query's common words left out of
 * what is embedded. A note without a vector yet (or a workspace line) is found by its keywords.
 */

export interface MemorySearchInput {
  readonly agentId: string;
  readonly query: string;
  readonly limit: number;
  /** Lines of the workspace's memory files, ranked with the notes (they have no vectors). */
  readonly files?: readonly FoundNote[];
  /** The dense side; absent: keywords only. */
  readonly dense?: Pick<DenseSearch, 'model' | 'embedQuery' | 'fusion' | 'keepCommonWords'>;
}

/** What a memory search found, best first, and how many notes it read of how many it may read. */
export interface MemorySearchResult {
  readonly found: FoundNote[];
  /** True when the agent has more notes than one search reads (`memorySearchNotes`): the oldest went unsearched. */
  readonly notesCapped: boolean;
}

/** The notes and lines best matching `query`, best first, one per distinct text. */
export async function searchMemory(db: Kysely<Database>, input: MemorySearchInput): Promise<MemorySearchResult> {
  const read = await newestNotes(db, input.agentId, DEFAULTS.memorySearchNotes + 1);
  const notes = read.slice(0, DEFAULTS.memorySearchNotes);
  const seen = new Set<string>();
  const docs = [...notes, ...(input.files ?? [])].filter((n) => {
    const key = `${n.day}\n${n.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const keywords = rankTexts(
    docs.map((d) => d.text),
    input.query,
  );
  // A rank's `seq` is the document's place counted from the oldest, so fused ties go to the newer.
  const asRanked = (index: number, score: number): Ranked => ({ seq: docs.length - index, score });
  const isCommon = (term: string) => keywords.share(term) >= DEFAULTS.denseQueryCommonShare;
  const dense = input.dense ? await denseRanking(db, input, input.dense, docs, isCommon) : [];
  // As history search: with a dense side, a match on words most notes hold (a name) does not enter the fusion.
  const telling = dense.length > 0 ? keywords.ranked.filter((r) => !r.terms.every(isCommon)) : keywords.ranked;
  const keywordRanking = telling.map((r) => asRanked(r.index, r.score));
  const fused = fuseRankings(keywordRanking.slice(0, DEFAULTS.recallCandidates), dense, {
    ...DEFAULT_FUSION,
    ...input.dense?.fusion,
  });
  return {
    found: fused.slice(0, input.limit).map((r) => docs[docs.length - r.seq]!),
    notesCapped: read.length > notes.length,
  };
}

/** The notes nearest the query by cosine, best first; none when the embedder cannot embed it now. */
async function denseRanking(
  db: Kysely<Database>,
  input: MemorySearchInput,
  dense: NonNullable<MemorySearchInput['dense']>,
  docs: readonly FoundNote[],
  isCommon: (term: string) => boolean,
): Promise<Ranked[]> {
  const ids = docs.flatMap((d, index) => ('id' in d && typeof d.id === 'string' ? [{ id: d.id, index }] : []));
  const vectors = await noteVectors(db, { agentId: input.agentId, model: dense.model, noteIds: ids.map((d) => d.id) });
  if (vectors.size === 0) return [];
  const text = dense.keepCommonWords ? input.query : denseQueryText(input.query, isCommon);
  const query = await dense.embedQuery(text);
  if (!query) return [];
  const scored: Ranked[] = [];
  for (const { id, index } of ids) {
    const vector = vectors.get(id);
    if (!vector || vector.length !== query.length) continue;
    let dot = 0;
    for (let i = 0; i < vector.length; i++) dot += vector[i]! * query[i]!;
    scored.push({ seq: docs.length - index, score: dot });
  }
  return scored.sort((a, b) => b.score - a.score || b.seq - a.seq).slice(0, DEFAULTS.recallCandidates);
}
