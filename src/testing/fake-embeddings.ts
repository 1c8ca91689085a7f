/**
 * A strict fake of an OpenAI-compatible `POST /v1/embeddings` endpoint: it refuses what OpenAI
 * refuses (a wrong model, a missing or empty input, more inputs than its batch limit, a missing
 * key) with OpenAI's error shape, and answers deterministic vectors: each word hashed to a fixed
 * random direction, summed and normalised, so texts sharing words are near. `synonyms` maps words
 * to one meaning, so a test can pose a paraphrase that keywords miss. It can be taken down, rate
 * limited, or made to answer another size, mid-run.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddingsEndpoint } from '../embeddings/embeddings-client';

/** What the fake answers and enforces. */
export interface FakeEmbeddingsOptions {
  /** The model it serves; a request naming another is refused (404 as OpenAI's model_not_found). */
  readonly model?: string;
  readonly dimensions?: number;
  /** Most inputs one request may carry (OpenAI: 2,048). */
  readonly maxBatch?: number;
  /** A bearer key every request must carry. */
  readonly apiKey?: string;
  /** Words mapped to one meaning before hashing: `{ researched: 'study', 'looking': 'study' }`. */
  readonly synonyms?: Readonly<Record<string, string>>;
}

/** One request the fake received (refused ones too). */
export interface FakeEmbeddingsRequest {
  readonly model: unknown;
  readonly input: unknown;
  readonly status: number;
}

/** A running fake embeddings server. */
export interface FakeEmbeddings {
  /** The API root to configure as KEEL_EMBEDDINGS_BASE_URL (ends in /v1). */
  readonly baseUrl: string;
  readonly model: string;
  /** The endpoint to give an embedder: this server and its model (and key). */
  readonly endpoint: EmbeddingsEndpoint;
  readonly requests: readonly FakeEmbeddingsRequest[];
  /** Every input text it embedded, in order. */
  readonly embedded: readonly string[];
  /** Answers 503 to every request until `up()`. */
  down(): void;
  up(): void;
  /** Answers 429 with Retry-After to the next `count` requests. */
  rateLimit(count: number, retryAfterSeconds: number): void;
  /** Goes down after `count` more successful requests (an embedder failing mid-backfill). */
  downAfter(count: number): void;
  /** Answers vectors of another size from now on (a different model served under the same name). */
  setDimensions(dimensions: number): void;
  /** The vector it answers for `text`. */
  vectorOf(text: string): number[];
  close(): Promise<void>;
}

const DEFAULTS = { model: 'fake-embed-1', dimensions: 32, maxBatch: 64 } as const;

/** Starts the fake on a free loopback port. */
export async function startFakeEmbeddings(options: FakeEmbeddingsOptions = {}): Promise<FakeEmbeddings> {
  const model = options.model ?? DEFAULTS.model;
  const maxBatch = options.maxBatch ?? DEFAULTS.maxBatch;
  let dimensions = options.dimensions ?? DEFAULTS.dimensions;
  let isDown = false;
  let okBeforeDown = Infinity;
  let limited = 0;
  let retryAfter = 1;
  const requests: FakeEmbeddingsRequest[] = [];
  const embedded: string[] = [];

  const vectorOf = (text: string): number[] => {
    const v = new Array<number>(dimensions).fill(0);
    for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const word = options.synonyms?.[raw] ?? raw;
      const seed = createHash('sha256').update(word).digest();
      for (let i = 0; i < dimensions; i++) v[i]! += (seed[i % seed.length]! / 255 - 0.5) * (i % 2 ? 1 : -1);
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  };

  const refuse = (res: ServerResponse, status: number, message: string, type = 'invalid_request_error') => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type, param: null, code: null } }));
    return status;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return refuse(res, 404, `Invalid URL (${req.method} ${req.url})`);
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`)
      return refuse(res, 401, 'Incorrect API key provided.', 'authentication_error');
    if (isDown) return refuse(res, 503, 'The server is temporarily unavailable.', 'server_error');
    if (limited > 0) {
      limited--;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) });
      res.end(JSON.stringify({ error: { message: 'Rate limit reached.', type: 'rate_limit_error' } }));
      return 429;
    }
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return refuse(res, 400, 'Content-Type must be application/json.');
    const body = JSON.parse(await read(req)) as { model?: unknown; input?: unknown; encoding_format?: unknown };
    requests.push({ model: body.model, input: body.input, status: 0 });
    if (body.model !== model)
      return refuse(res, 404, `The model \`${String(body.model)}\` does not exist or you do not have access to it.`);
    if (body.encoding_format !== undefined && body.encoding_format !== 'float')
      return refuse(res, 400, `encoding_format must be "float" here (got ${JSON.stringify(body.encoding_format)}).`);
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0 || inputs.some((t) => typeof t !== 'string' || t === ''))
      return refuse(
        res,
        400,
        "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
      );
    if (inputs.length > maxBatch)
      return refuse(res, 400, `'$.input' has ${inputs.length} items; at most ${maxBatch} are allowed per request.`);
    if (okBeforeDown-- <= 0) {
      isDown = true;
      return refuse(res, 503, 'The server is temporarily unavailable.', 'server_error');
    }
    embedded.push(...(inputs as string[]));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        model,
        data: (inputs as string[]).map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t) })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
    return 200;
  }

  const server = createServer((req, res) => {
    handle(req, res)
      .then((status) => {
        const last = requests.at(-1);
        if (last && last.status === 0) requests[requests.length - 1] = { ...last, status };
      })
      .catch((err: unknown) => refuse(res, 500, `fake-embeddings crashed: ${String(err)}`, 'server_error'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${url}/v1`,
    model,
    endpoint: { baseUrl: `${url}/v1`, model, ...(options.apiKey ? { apiKey: options.apiKey } : {}) },
    requests,
    embedded,
    down: () => void (isDown = true),
    up: () => {
      isDown = false;
      okBeforeDown = Infinity;
    },
    rateLimit: (count, seconds) => {
      limited = count;
      retryAfter = seconds;
    },
    downAfter: (count) => void (okBeforeDown = count),
    setDimensions: (d) => void (dimensions = d),
    vectorOf,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}
