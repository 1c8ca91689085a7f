import { DEFAULTS } from '../config/defaults';
import { EmbedderUnavailableError } from './embeddings-client';

/**
 * When the embedder may be asked again. Each failure in a row doubles the wait (a Retry-After that
 * names a longer one wins); after `embeddingsBreakerFailures` in a row the breaker is open, and
 * searches rank by keywords without waiting on the embedder until a retry succeeds.
 */
export class EmbedderBreaker {
  private failures = 0;
  private notBefore = 0;
  private lastError: string | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly backoff: { readonly first: number; readonly max: number } = DEFAULTS.embeddingsBackoffMs,
    private readonly openAfter: number = DEFAULTS.embeddingsBreakerFailures,
  ) {}

  /** True when a call may go out now. */
  ready(): boolean {
    return this.now() >= this.notBefore;
  }

  /** True after enough failures in a row: searches skip the embedder. */
  get open(): boolean {
    return this.failures >= this.openAfter;
  }

  /** Milliseconds until a call may go out (0 when ready). */
  waitMs(): number {
    return Math.max(0, this.notBefore - this.now());
  }

  /** What the breaker says for status lines: closed, or open with the failure count and the last error. */
  describe(): string {
    if (this.failures === 0) return 'embedder answering';
    return `embedder failing (${this.failures} in a row, next try in ${Math.ceil(this.waitMs() / 1000)} s): ${this.lastError}`;
  }

  succeeded(): void {
    this.failures = 0;
    this.notBefore = 0;
    this.lastError = undefined;
  }

  failed(err: unknown): void {
    this.failures++;
    this.lastError = err instanceof Error ? err.message : String(err);
    const doubled = Math.min(this.backoff.max, this.backoff.first * 2 ** (this.failures - 1));
    const asked = err instanceof EmbedderUnavailableError ? (err.retryAfterMs ?? 0) : 0;
    this.notBefore = this.now() + Math.max(doubled, asked);
  }
}
