import { DEFAULTS } from '../config/defaults';
import { embedTexts, type EmbeddingsEndpoint } from './embeddings-client';
import { EmbedderBreaker } from './embedder-breaker';

/**
 * One embeddings endpoint as the worker uses it: texts split into batches of the configured size,
 * every call through one breaker, so the background embedder and searches back off together.
 */
export class Embedder {
  readonly breaker: EmbedderBreaker;

  constructor(
    readonly endpoint: EmbeddingsEndpoint,
    private readonly batchSize: number = DEFAULTS.embeddingsBatchSize,
    /** One batch's request may take this long (a CPU-served model under load needs more than the default). */
    private readonly timeoutMs: number = DEFAULTS.embeddingsTimeoutMs,
  ) {
    this.breaker = new EmbedderBreaker();
  }

  /** The model whose vector space the vectors are in; vectors are stored under it. */
  get model(): string {
    return this.endpoint.model;
  }

  /** The texts' vectors (unit length), in order; one request per batch. Failures count against the breaker. */
  async embed(texts: readonly string[], opts: { readonly timeoutMs?: number } = {}): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      try {
        const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
        out.push(...(await embedTexts(this.endpoint, texts.slice(i, i + this.batchSize), { timeoutMs })));
        this.breaker.succeeded();
      } catch (err) {
        this.breaker.failed(err);
        throw err;
      }
    }
    return out;
  }
}

/** The worker's embedders, one per endpoint, so every agent naming the same endpoint shares its breaker. */
export class EmbedderPool {
  private readonly byEndpoint = new Map<string, Embedder>();

  constructor(private readonly timeoutMs: number = DEFAULTS.embeddingsTimeoutMs) {}

  /** The embedder for `endpoint`, made on first use. */
  for(endpoint: EmbeddingsEndpoint): Embedder {
    const key = `${endpoint.baseUrl}\u0000${endpoint.model}\u0000${endpoint.apiKey ?? ''}`;
    let embedder = this.byEndpoint.get(key);
    if (!embedder)
      this.byEndpoint.set(key, (embedder = new Embedder(endpoint, DEFAULTS.embeddingsBatchSize, this.timeoutMs)));
    return embedder;
  }
}
