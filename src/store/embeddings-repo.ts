import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRows } from './entry-row';
import { MESSAGE_TYPES } from './entries-repo';
import type { TranscriptEntry } from '../context/types';
import { bytesVector, vectorBytes } from './vector-bytes';

/**
 * The vectors of transcript entries (`entry_embeddings`) and the dimensions of each embedding model
 * (`embedding_models`). Only plain rows are embedded: a vector leaks its text's meaning, so sealed
 * rows never get one. Every write is idempotent by (entry, model).
 */

/** An entry waiting for its vector under a model. */
export interface EntryToEmbed {
  readonly agentId: string;
  readonly sessionId: string;
  readonly seq: number;
  readonly entry: TranscriptEntry;
  /** The message before it in its session, if any: an answer is embedded with the question it answers. */
  readonly previous?: TranscriptEntry;
}

/** The vectors a model's answer could not be stored as: another size than the model answered first. */
export class EmbeddingDimensionsError extends Error {
  override readonly name = 'EmbeddingDimensionsError';
  constructor(
    readonly model: string,
    readonly recorded: number,
    readonly answered: number,
  ) {
    super(
      `embedding model ${model} answered ${answered}-dimension vectors, but its vectors here have ${recorded}; a different model is served under that name: set KEEL_EMBEDDINGS_MODEL to a new name so Keel re-embeds instead of mixing vector spaces`,
    );
  }
}

/** The newest plain message entries of `agentId` (optionally one session) with no vector under `model`. */
export async function entriesWithoutVectors(
  db: Kysely<Database>,
  opts: { readonly agentId: string; readonly model: string; readonly limit: number; readonly sessionId?: string },
): Promise<EntryToEmbed[]> {
  let query = db
    .selectFrom('transcript_entries as e')
    .select(['e.agent_id', 'e.session_id', 'e.id', 'e.seq', 'e.type', 'e.payload'])
    .where('e.agent_id', '=', opts.agentId)
    .where('e.type', 'in', MESSAGE_TYPES)
    .where('e.search_terms', 'is', null)
    .where(sql<boolean>`not (e.payload ? '$sealed')`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('entry_embeddings as v')
            .select(sql`1`.as('one'))
            .whereRef('v.agent_id', '=', 'e.agent_id')
            .whereRef('v.session_id', '=', 'e.session_id')
            .whereRef('v.seq', '=', 'e.seq')
            .where('v.model', '=', opts.model),
        ),
      ),
    )
    .orderBy('e.seq', 'desc')
    .limit(opts.limit);
  if (opts.sessionId) query = query.where('e.session_id', '=', opts.sessionId);
  const rows = decodeEntryRows(await query.execute());
  const before = await previousMessages(
    db,
    opts.agentId,
    rows.map((r) => Number(r.seq)),
  );
  return rows.map((r) => {
    const previous = before.get(Number(r.seq));
    return {
      agentId: r.agent_id,
      sessionId: r.session_id,
      seq: Number(r.seq),
      entry: r.payload,
      ...(previous ? { previous } : {}),
    };
  });
}

/** For each seq, the plain message before it in its session. */
async function previousMessages(
  db: Kysely<Database>,
  agentId: string,
  seqs: readonly number[],
): Promise<Map<number, TranscriptEntry>> {
  if (seqs.length === 0) return new Map();
  const types = sql.join(MESSAGE_TYPES.map((t) => sql`${t}`));
  const { rows } = await sql<{ of_seq: string; id: string; type: string; payload: unknown }>`
    select h.seq as of_seq, n.id, n.type, n.payload
      from transcript_entries h
      cross join lateral (select id, type, payload from transcript_entries e
        where e.agent_id = h.agent_id and e.session_id = h.session_id and e.seq < h.seq and e.type in (${types})
        order by e.seq desc limit 1) n
     where h.agent_id = ${agentId} and h.seq in (${sql.join(seqs.map((q) => sql`${q}`))})
       and not (n.payload ? '$sealed')`.execute(db);
  return new Map(decodeEntryRows(rows).map((r) => [Number(r.of_seq), r.payload]));
}

/**
 * Records `dimensions` as `model`'s on its first answer; throws {@link EmbeddingDimensionsError} when
 * the model already answered with another size.
 */
export async function checkModelDimensions(db: Kysely<Database>, model: string, dimensions: number): Promise<void> {
  await db
    .insertInto('embedding_models')
    .values({ model, dimensions, first_seen_at: new Date() })
    .onConflict((oc) => oc.column('model').doNothing())
    .execute();
  const row = await db
    .selectFrom('embedding_models')
    .select('dimensions')
    .where('model', '=', model)
    .executeTakeFirstOrThrow();
  if (row.dimensions !== dimensions) throw new EmbeddingDimensionsError(model, row.dimensions, dimensions);
}

/**
 * Stores the vectors; an entry that already has one under the model keeps it (idempotent by entry).
 * An empty vector marks an entry with no text to embed, so it is not picked again.
 */
export async function writeVectors(
  db: Kysely<Database>,
  model: string,
  rows: readonly { readonly entry: EntryToEmbed; readonly vector: Float32Array }[],
): Promise<void> {
  if (rows.length === 0) return;
  const now = new Date();
  await db
    .insertInto('entry_embeddings')
    .values(
      rows.map(({ entry, vector }) => ({
        agent_id: entry.agentId,
        session_id: entry.sessionId,
        seq: entry.seq,
        model,
        vector: vectorBytes(vector),
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'model', 'seq']).doNothing())
    .execute();
}

/** The vectors of `sessionIds` under `model` with seq above `afterSeq`, in seq order; an entry marked empty has a 0-length one. */
export async function sessionVectors(
  db: Kysely<Database>,
  opts: {
    readonly agentId: string;
    readonly sessionIds: readonly string[];
    readonly model: string;
    readonly afterSeq: number;
  },
): Promise<{ seq: number; vector: Float32Array }[]> {
  if (opts.sessionIds.length === 0) return [];
  const rows = await db
    .selectFrom('entry_embeddings')
    .select(['seq', 'vector'])
    .where('agent_id', '=', opts.agentId)
    .where('session_id', 'in', opts.sessionIds)
    .where('model', '=', opts.model)
    .where('seq', '>', opts.afterSeq)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), vector: bytesVector(r.vector) }));
}

/** How many of the sessions' message entries there are, and how many have a vector under `model`. */
export async function vectorCoverage(
  db: Kysely<Database>,
  agentId: string,
  sessionIds: readonly string[],
  model: string,
): Promise<{ entries: number; withVectors: number }> {
  if (sessionIds.length === 0) return { entries: 0, withVectors: 0 };
  const { rows } = await sql<{ entries: number; with_vectors: number }>`
    select count(*)::int as entries,
      count(*) filter (where exists (select 1 from entry_embeddings v where v.agent_id = e.agent_id
        and v.session_id = e.session_id and v.seq = e.seq and v.model = ${model}))::int as with_vectors
      from transcript_entries e
     where e.agent_id = ${agentId} and e.session_id in (${sql.join(sessionIds.map((id) => sql`${id}`))})
       and e.type in (${sql.join(MESSAGE_TYPES.map((t) => sql`${t}`))})`.execute(db);
  return { entries: Number(rows[0]?.entries ?? 0), withVectors: Number(rows[0]?.with_vectors ?? 0) };
}

/** The agents that have transcripts, for the background embedder to visit. */
export async function agentsWithEntries(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('sessions').select('agent_id').distinct().execute();
  return rows.map((r) => r.agent_id);
}
