import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { KeelConfig } from '../config/keel-config';
import { DEFAULTS } from '../config/defaults';
import { agentsWithEntries, entriesWithoutVectors } from '../store/embeddings-repo';
import { notesWithoutVectors } from '../store/note-embeddings-repo';
import { recallSetting } from './recall-setting';
import { embedEntries } from './embed-entries';
import { embedNotes } from './embed-notes';
import type { Embedder, EmbedderPool } from './embedder';

/**
 * The worker's embedder: a loop beside the Temporal worker that finds memory notes and entries
 * without a vector under their agent's model and embeds them in batches, newest first. It is off every turn's path and
 * needs no workflow change (no history grows, no replay changes); several workers may run it at once,
 * since every write is idempotent by entry. A failing embedder is retried with backoff through its
 * breaker; meanwhile searches rank the entries without vectors by keywords.
 */
export interface BackgroundEmbedderOptions {
  readonly db: Kysely<Database>;
  readonly embedders: EmbedderPool;
  /** The config in force for an agent (its section merged over the defaults). */
  readonly configFor: (agentId: string) => KeelConfig;
  readonly log: (line: string) => void;
  readonly pollMs?: number;
}

/** A running background embedder. */
export interface BackgroundEmbedder {
  /** One pass over every agent until nothing is left or its embedder fails; resolves to the entries embedded. */
  pass(): Promise<number>;
  /** Ends the loop after the batch in flight. */
  stop(): Promise<void>;
}

/** Starts the loop (`loop: false`: no loop, passes run only when asked, as tests do). */
export function startBackgroundEmbedder(
  opts: BackgroundEmbedderOptions,
  { loop = true }: { readonly loop?: boolean } = {},
): BackgroundEmbedder {
  let stopped = false;
  let wake: (() => void) | undefined;
  const pass = () => embedPass(opts, () => stopped);
  const running = loop
    ? (async () => {
        while (!stopped) {
          const embedded = await pass().catch((err: unknown) => {
            opts.log(`embeddings: pass failed: ${(err as Error).message}`);
            return 0;
          });
          if (embedded > 0 || stopped) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, opts.pollMs ?? DEFAULTS.embeddingsPollMs);
            timer.unref();
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      })()
    : Promise.resolve();
  return {
    pass,
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}

async function embedPass(opts: BackgroundEmbedderOptions, stopped: () => boolean): Promise<number> {
  let embedded = 0;
  for (const agentId of await agentsWithEntries(opts.db)) {
    const setting = recallSetting(opts.configFor(agentId));
    if (setting.mode !== 'hybrid') continue;
    const embedder = opts.embedders.for(setting.endpoint);
    const query = { agentId, model: embedder.model, limit: DEFAULTS.embeddingsBatchSize };
    // The memory notes first: few, and what memory_search ranks.
    embedded += await embedAll(opts, agentId, embedder, stopped, {
      next: () => notesWithoutVectors(opts.db, query),
      embed: (batch) => embedNotes(opts.db, embedder, batch),
    });
    embedded += await embedAll(opts, agentId, embedder, stopped, {
      next: () => entriesWithoutVectors(opts.db, query),
      embed: (batch) => embedEntries(opts.db, embedder, batch),
    });
  }
  return embedded;
}

/** Batches of one kind (notes or entries) until none is left, the embedder fails, or the loop stops. */
async function embedAll<T>(
  opts: BackgroundEmbedderOptions,
  agentId: string,
  embedder: Embedder,
  stopped: () => boolean,
  kind: { readonly next: () => Promise<T[]>; readonly embed: (batch: T[]) => Promise<void> },
): Promise<number> {
  let embedded = 0;
  while (!stopped() && embedder.breaker.ready()) {
    const batch = await kind.next();
    if (batch.length === 0) break;
    try {
      await kind.embed(batch);
      embedded += batch.length;
    } catch (err) {
      opts.log(`embeddings: agent ${agentId}: ${embedder.breaker.describe()} (${(err as Error).message})`);
      break;
    }
  }
  return embedded;
}
