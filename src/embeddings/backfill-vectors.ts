import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { DEFAULTS } from '../config/defaults';
import { entriesWithoutVectors } from '../store/embeddings-repo';
import { EmbedderUnavailableError } from './embeddings-client';
import { embedEntries } from './embed-entries';
import type { Embedder } from './embedder';

/** What a backfill did. */
export interface BackfillReport {
  readonly agentId: string;
  readonly model: string;
  readonly embedded: number;
  /** Entries still without a vector when it stopped (0 when it finished). */
  readonly left: number;
}

/** The backfill stopped: the embedder failed more times in a row than it waits for. What was embedded stays. */
export class BackfillStoppedError extends Error {
  override readonly name = 'BackfillStoppedError';
  constructor(
    readonly report: BackfillReport,
    cause: Error,
  ) {
    super(
      `embeddings backfill stopped after ${report.embedded} entries (${report.left}+ left): ${cause.message}; what was embedded is kept, run it again to go on`,
    );
  }
}

/**
 * Embeds every entry of an agent (or one session) that has no vector under the embedder's model,
 * newest first, a batch at a time. An unavailable embedder is waited for with the breaker's backoff,
 * `maxFailures` times in a row at most; a refused request stops at once. Safe beside a worker's
 * background embedder: both skip what the other stored.
 */
export async function backfillVectors(opts: {
  readonly db: Kysely<Database>;
  readonly embedder: Embedder;
  readonly agentId: string;
  readonly sessionId?: string;
  readonly maxFailures?: number;
  readonly onBatch?: (embedded: number) => void;
}): Promise<BackfillReport> {
  const { db, embedder, agentId } = opts;
  let embedded = 0;
  let failures = 0;
  for (;;) {
    const batch = await entriesWithoutVectors(db, {
      agentId,
      model: embedder.model,
      limit: DEFAULTS.embeddingsBatchSize,
      ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
    });
    const report = { agentId, model: embedder.model, embedded, left: batch.length };
    if (batch.length === 0) return report;
    try {
      await embedEntries(db, embedder, batch);
      failures = 0;
      embedded += batch.length;
      opts.onBatch?.(batch.length);
    } catch (err) {
      if (!(err instanceof EmbedderUnavailableError) || ++failures > (opts.maxFailures ?? 5))
        throw new BackfillStoppedError(report, err as Error);
      await new Promise((resolve) => setTimeout(resolve, embedder.breaker.waitMs()));
    }
  }
}
