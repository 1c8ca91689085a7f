import type { KeelConfig } from '../config/keel-config';
import { DEFAULTS } from '../config/defaults';
import { SessionVectorCache } from '../store/session-vector-cache';
import type { DenseSearch } from '../store/history-search';
import { EmbedderPool } from './embedder';
import { recallSetting } from './recall-setting';

/** What hybrid recall keeps for the worker's life: an embedder (and breaker) per endpoint, and the sessions' vectors. */
export interface Recall {
  readonly embedders: EmbedderPool;
  readonly vectors: SessionVectorCache;
  /** Fusion and query handling other than the defaults (the recall bench's ablation). */
  readonly tuning?: Pick<DenseSearch, 'fusion' | 'keepCommonWords' | 'keepCommonMatches'>;
  /** How long a search waits for its query's vector. */
  readonly queryTimeoutMs: number;
}

/** A worker's recall state, empty; the timeouts are the defaults' unless given (the recall bench's CPU-served model needs longer). */
export function newRecall(timeouts: { readonly batchMs?: number; readonly queryMs?: number } = {}): Recall {
  return {
    embedders: new EmbedderPool(timeouts.batchMs),
    vectors: new SessionVectorCache(DEFAULTS.recallCachedScopes),
    queryTimeoutMs: timeouts.queryMs ?? DEFAULTS.embeddingsQueryTimeoutMs,
  };
}

/**
 * The dense side of a search for an agent's config, or undefined when its recall is keywords only.
 * A query the embedder cannot embed in time (down, breaker open, slow) is searched by keywords alone.
 */
export function denseSearchFor(recall: Recall | undefined, config: KeelConfig): DenseSearch | undefined {
  const setting = recallSetting(config);
  if (!recall || setting.mode !== 'hybrid') return undefined;
  const embedder = recall.embedders.for(setting.endpoint);
  return {
    model: embedder.model,
    vectors: recall.vectors,
    ...recall.tuning,
    async embedQuery(text) {
      if (!embedder.breaker.ready()) return undefined;
      const vectors = await embedder.embed([text], { timeoutMs: recall.queryTimeoutMs }).catch(() => undefined);
      return vectors?.[0];
    },
  };
}
