/**
 * An OpenAI-compatible `/v1/embeddings` client (OpenAI, Ollama, vLLM, TEI, LM Studio, llama.cpp and
 * LiteLLM serve it). One call embeds one batch; retries belong to the caller (the background
 * embedder's backoff and breaker), so failures are typed by what a caller does about them.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';

/** Where an agent's embeddings come from (KEEL_EMBEDDINGS_BASE_URL, _MODEL, _API_KEY, or `embeddings` per agent). */
export interface EmbeddingsEndpoint {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; `/embeddings` is added. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
}

/** The embedder cannot answer now (down, overloaded, rate limited): try again later. */
export class EmbedderUnavailableError extends Error {
  constructor(
    readonly status: number | undefined,
    /** The wait the server asked for (Retry-After), if it named one. */
    readonly retryAfterMs: number | undefined,
    detail: string,
  ) {
    super(`embeddings endpoint unavailable${status ? ` (HTTP ${status})` : ''}: ${detail}`);
    this.name = 'EmbedderUnavailableError';
  }
}

/** The embedder refused the request or answered out of shape: retrying the same request will not help. */
export class EmbeddingsRequestError extends Error {
  constructor(
    readonly status: number | undefined,
    detail: string,
  ) {
    super(`embeddings request refused${status ? ` (HTTP ${status})` : ''}: ${detail}`);
    this.name = 'EmbeddingsRequestError';
  }
}

const embeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});

/** Embeds `texts` in one request; the vectors come back in the texts' order, unit length. */
export async function embedTexts(
  endpoint: EmbeddingsEndpoint,
  texts: readonly string[],
  opts: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULTS.embeddingsTimeoutMs);
  let response: Response;
  try {
    response = await fetch(`${endpoint.baseUrl.replace(/\/+$/, '')}/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: endpoint.model, input: texts, encoding_format: 'float' }),
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    });
  } catch (err) {
    throw new EmbedderUnavailableError(undefined, undefined, (err as Error).message);
  }
  if (response.status === 429 || response.status >= 500) {
    throw new EmbedderUnavailableError(
      response.status,
      retryAfterMs(response.headers.get('retry-after')),
      (await response.text()).slice(0, 200),
    );
  }
  if (!response.ok) throw new EmbeddingsRequestError(response.status, (await response.text()).slice(0, 300));
  const parsed = embeddingsResponse.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) throw new EmbeddingsRequestError(response.status, 'the answer has no data[].embedding');
  const vectors: Float32Array[] = new Array(texts.length);
  for (const item of parsed.data.data) if (item.index < texts.length) vectors[item.index] = unit(item.embedding);
  if (vectors.some((v) => v === undefined) || parsed.data.data.length !== texts.length)
    throw new EmbeddingsRequestError(
      response.status,
      `asked for ${texts.length} vectors, got ${parsed.data.data.length}`,
    );
  return vectors;
}

/** A vector scaled to length 1, so a dot product is the cosine (servers differ on normalising). */
function unit(values: readonly number[]): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** Retry-After in milliseconds: seconds or an HTTP date. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
