import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';
import { sessionVectors } from './embeddings-repo';
import type { Ranked } from '../embeddings/rank-fusion';

/**
 * The worker's copy of each searched session key's vectors, so a search reads only what was
 * embedded since the last one (one count per search when nothing changed) and ranks by a dot
 * product over a packed matrix: the portable path, on any PostgreSQL and on PGlite.
 */

interface CachedScope {
  readonly seqs: number[];
  /** Row-major, `dimensions` floats per seq. */
  matrix: Float32Array;
  dimensions: number;
  /** Highest seq read, and how many vectors the scope held at that read. */
  lastSeq: number;
  count: number;
}

/** What a dense search covers: a session key's sessions under one model, less the turn being answered. */
export interface DenseScope {
  readonly agentId: string;
  readonly sessionIds: readonly string[];
  readonly model: string;
  /** Entries of this session from this seq on are left out. */
  readonly from?: { readonly sessionId: string; readonly seq: number };
}

/** Session keys' vectors held in memory, the least recently searched dropped past `maxScopes`. */
export class SessionVectorCache {
  private readonly scopes = new Map<string, CachedScope>();

  constructor(private readonly maxScopes: number) {}

  /** The `limit` entries nearest `query` (a unit vector), best first, scored by cosine. */
  async nearest(db: Kysely<Database>, scope: DenseScope, query: Float32Array, limit: number): Promise<Ranked[]> {
    const cached = await this.refreshed(db, scope);
    if (cached.seqs.length === 0 || cached.dimensions !== query.length) return [];
    const excluded = scope.from ? await seqsOfSessionFrom(db, scope) : undefined;
    const best: Ranked[] = [];
    const { matrix, dimensions, seqs } = cached;
    for (let row = 0; row < seqs.length; row++) {
      const seq = seqs[row]!;
      if (excluded && seq >= excluded.seq && excluded.seqs.has(seq)) continue;
      const dot = dotAt(matrix, row * dimensions, query);
      if (best.length < limit) insertSorted(best, { seq, score: dot });
      else if (dot > best.at(-1)!.score) {
        best.pop();
        insertSorted(best, { seq, score: dot });
      }
    }
    return best;
  }

  /** The scope's vectors, read in full the first time and when some changed out of seq order, else only the new ones. */
  private async refreshed(db: Kysely<Database>, scope: DenseScope): Promise<CachedScope> {
    const key = `${scope.agentId}\u0000${scope.model}\u0000${[...scope.sessionIds].sort().join('\u0000')}`;
    let cached = this.scopes.get(key);
    this.scopes.delete(key);
    const { count, maxSeq } = await vectorCount(db, scope);
    if (cached && (count < cached.count || maxSeq < cached.lastSeq)) cached = undefined;
    if (!cached) cached = { seqs: [], matrix: new Float32Array(0), dimensions: 0, lastSeq: -1, count: 0 };
    if (count !== cached.count) {
      const added = await sessionVectors(db, { ...scope, afterSeq: cached.lastSeq });
      // Vectors written below the last seq read (a backfill goes newest first): read the scope again.
      if (cached.count + added.length !== count && cached.count > 0) {
        cached = { seqs: [], matrix: new Float32Array(0), dimensions: 0, lastSeq: -1, count: 0 };
        append(cached, await sessionVectors(db, { ...scope, afterSeq: -1 }));
      } else append(cached, added);
      cached.count = count;
    }
    this.scopes.set(key, cached);
    while (this.scopes.size > this.maxScopes) this.scopes.delete(this.scopes.keys().next().value!);
    return cached;
  }
}

function append(cached: CachedScope, rows: readonly { seq: number; vector: Float32Array }[]): void {
  for (const r of rows) cached.lastSeq = Math.max(cached.lastSeq, r.seq);
  const dimensions = cached.dimensions || (rows.find((r) => r.vector.length > 0)?.vector.length ?? 0);
  // Entries marked empty (nothing to embed) are counted as read, never searched.
  const kept = dimensions > 0 ? rows.filter((r) => r.vector.length === dimensions) : [];
  if (kept.length === 0) return;
  const matrix = new Float32Array((cached.seqs.length + kept.length) * dimensions);
  matrix.set(cached.matrix);
  kept.forEach((r, i) => {
    matrix.set(r.vector, (cached.seqs.length + i) * dimensions);
  });
  for (const r of kept) cached.seqs.push(r.seq);
  cached.matrix = matrix;
  cached.dimensions = dimensions;
}

async function vectorCount(db: Kysely<Database>, scope: DenseScope): Promise<{ count: number; maxSeq: number }> {
  // Key columns only (empty markers counted too), so the primary key's index answers without reading a vector.
  const { rows } = await sql<{ n: number; max_seq: string | null }>`
    select count(*)::int as n, max(seq) as max_seq from entry_embeddings
     where agent_id = ${scope.agentId} and model = ${scope.model}
       and session_id in (${sql.join(scope.sessionIds.map((id) => sql`${id}`))})`.execute(db);
  return { count: Number(rows[0]?.n ?? 0), maxSeq: Number(rows[0]?.max_seq ?? -1) };
}

/** The seqs of the answered turn's session from its start on: left out, as the keyword side leaves them out. */
async function seqsOfSessionFrom(db: Kysely<Database>, scope: DenseScope): Promise<{ seq: number; seqs: Set<number> }> {
  const from = scope.from!;
  const rows = await db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', scope.agentId)
    .where('session_id', '=', from.sessionId)
    .where('seq', '>=', from.seq)
    .execute();
  return { seq: from.seq, seqs: new Set(rows.map((r) => Number(r.seq))) };
}

/** The dot product of `query` and the row at `offset`, four sums at a time (a fifth faster than one in V8). */
function dotAt(matrix: Float32Array, offset: number, query: Float32Array): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const n = query.length;
  const whole = n - (n % 4);
  for (let i = 0; i < whole; i += 4) {
    a += matrix[offset + i]! * query[i]!;
    b += matrix[offset + i + 1]! * query[i + 1]!;
    c += matrix[offset + i + 2]! * query[i + 2]!;
    d += matrix[offset + i + 3]! * query[i + 3]!;
  }
  for (let i = whole; i < n; i++) a += matrix[offset + i]! * query[i]!;
  return a + b + c + d;
}

function insertSorted(list: Ranked[], item: Ranked): void {
  let i = list.length;
  while (i > 0 && list[i - 1]!.score < item.score) i--;
  list.splice(i, 0, item);
}
