/**
 * The HTTP API under test: `serveApi` on an ephemeral loopback port for a test's worker, a client on
 * Node's fetch that checks every response (JSON bodies and each SSE event) against the server's own
 * /openapi.json with ajv, and an SSE reader that can hang up mid-stream.
 */
import Ajv2020 from 'ajv/dist/2020';
import type { Connection } from '@temporalio/client';
import type { Store } from '../../src/store/connect';
import addFormats from 'ajv-formats';
import { KeelClient } from '../../src/client/keel-client';
import { configFromEnv } from '../../src/config/keel-config';
import { replyStreamForStore } from '../../src/streaming/reply-stream-for-store';
import { temporalDependency } from '../../src/runtime/reach';
import { storeDependency } from '../../src/store/reachable-store';
import { serveApi } from '../../src/api/serve-api';
import { createKeelLogger } from '../../src/observability/logger';
import type { WorkerContext } from './integration';
import type { TemporalTestEnv } from './temporal';

/** One answer: status, content type and the parsed body (JSON) or the text. */
export interface ApiResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: any;
  readonly headers: Headers;
}

/** One server-sent event, its data parsed as JSON, and its `id` when it had one. */
export interface SseEvent {
  readonly event: string;
  readonly data: any;
  readonly id?: string;
}

export interface CallOptions {
  /** Values for the `{…}` parts of the path template, URL-encoded into it. */
  readonly params?: Record<string, string>;
  readonly query?: Record<string, string>;
  /** Sent as JSON, or as is when a string. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** The bearer token; `null` sends none. Default: the server's. */
  readonly token?: string | null;
}

/** An open event stream: events as they come, and a hang-up. */
export interface SseStream {
  /** The next event (each one is checked against the document's `x-sse-events`). */
  next(): Promise<SseEvent>;
  /** Hangs up, as a client that goes away. */
  cancel(): Promise<void>;
  /** The last `id` the stream sent (with an event or alone), as an EventSource keeps it to reconnect with. */
  lastEventId(): string | undefined;
}

export interface ApiUnderTest {
  readonly url: string;
  /** The server's log lines (pino JSON, parsed). */
  readonly logLines: ReadonlyArray<Record<string, unknown>>;
  /** Calls `method template` and checks the answer against /openapi.json. */
  call(method: 'GET' | 'POST', template: string, opts?: CallOptions): Promise<ApiResponse>;
  /** Opens `method template` with `Accept: text/event-stream`; a non-200 answer throws with its body. */
  stream(method: 'GET' | 'POST', template: string, opts?: CallOptions): Promise<SseStream>;
  close(): Promise<void>;
}

export interface ApiOptions {
  /** The server's token; `null`: none (loopback). Default: a fixed test token. */
  readonly token?: string | null;
  readonly allowedAgents?: string[];
  /** The API's own Temporal connection and the address it names (default: the suite's). */
  readonly temporal?: { readonly connection: Connection; readonly address: string };
  /** How often event streams read the transcript without a notice (default: every 200 ms). */
  readonly eventsPollMs?: number;
  /** The API's own store (default: the worker's), e.g. one that reaches the database through a proxy. */
  readonly store?: Store;
}

/** The token the test servers require unless told otherwise. */
export const TEST_API_TOKEN = 'test-token-0123456789abcdef';

/** Serves the API for the test's worker: its task queue, its store (replies stream through it). */
export async function startApi(env: TemporalTestEnv, t: WorkerContext, opts: ApiOptions = {}): Promise<ApiUnderTest> {
  const token = opts.token === undefined ? TEST_API_TOKEN : (opts.token ?? undefined);
  const store = opts.store ?? t.store;
  const stream = replyStreamForStore(store);
  const logLines: Array<Record<string, unknown>> = [];
  const logger = createKeelLogger({
    destination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const client = new KeelClient({
    connection: opts.temporal?.connection ?? env.connection,
    namespace: env.namespace,
    taskQueue: t.taskQueue,
    stream,
    ...(opts.allowedAgents ? { allowedAgents: opts.allowedAgents } : {}),
  });
  const defaults = configFromEnv(
    {},
    { taskQueue: t.taskQueue, resetMode: 'none', ...(opts.allowedAgents ? { allowedAgents: opts.allowedAgents } : {}) },
  );
  const served = await serveApi(
    {
      client,
      db: store.db,
      settings: { defaults, agents: new Map() },
      dependencies: {
        temporal: temporalDependency(opts.temporal?.address ?? env.address),
        database: storeDependency(store.target),
      },
      eventsPollMs: opts.eventsPollMs ?? 200,
      events: stream,
      logger,
      ...(token ? { token } : {}),
    },
    { host: '127.0.0.1', port: 0 },
  );
  const authOf = (o: CallOptions): Record<string, string> => {
    const sent = o.token === undefined ? token : o.token;
    return sent ? { authorization: `Bearer ${sent}` } : {};
  };
  const request = (method: string, template: string, o: CallOptions, accept: string) => {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(o.params?.[name] ?? ''));
    const query = o.query ? `?${new URLSearchParams(o.query).toString()}` : '';
    const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string> = {
      accept,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...authOf(o),
      ...o.headers,
    };
    return fetch(`${served.url}${path}${query}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  };
  const rawDocument = (await (await request('GET', '/openapi.json', {}, 'application/json')).json()) as OpenApiDocument;
  const validator = openApiValidator(rawDocument);
  return {
    url: served.url,
    logLines,
    async call(method, template, o = {}) {
      const res = await request(method, template, o, 'application/json');
      const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!;
      const text = await res.text();
      const body = contentType.endsWith('json') ? JSON.parse(text) : text;
      validator.response(template, method, res.status, contentType, body);
      return { status: res.status, contentType, body, headers: res.headers };
    },
    async stream(method, template, o = {}) {
      const res = await request(method, template, o, 'text/event-stream');
      if (res.status !== 200) throw new Error(`${method} ${template}: ${res.status} ${await res.text()}`);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return sseStream(res, (event) => validator.event(template, method, event));
    },
    close: async () => {
      await served.close();
      await stream.close();
    },
  };
}

interface OpenApiDocument {
  readonly paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { content?: Record<string, unknown>; 'x-sse-events'?: Record<string, unknown> }> }
    >
  >;
}

/** Checks bodies against the document's schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses). */
function openApiValidator(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  const pointer = (...parts: string[]) =>
    `openapi.json#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
  const check = (ref: string, value: unknown, what: string) => {
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    if (!validate(value))
      throw new Error(
        `${what} does not match /openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`,
      );
  };
  const operation = (template: string, method: string) => {
    const op = document.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`/openapi.json has no ${method} ${template}`);
    return op;
  };
  return {
    response(template: string, method: string, status: number, contentType: string, body: unknown) {
      const declared = operation(template, method).responses[String(status)];
      if (!declared?.content?.[contentType])
        throw new Error(
          `/openapi.json declares no ${status} ${contentType} answer for ${method} ${template}: ${JSON.stringify(body)}`,
        );
      check(
        pointer('paths', template, method.toLowerCase(), 'responses', String(status), 'content', contentType, 'schema'),
        body,
        `${method} ${template} ${status}`,
      );
    },
    event(template: string, method: string, event: SseEvent) {
      const events = operation(template, method).responses['200']?.['x-sse-events'] ?? {};
      if (!(event.event in events))
        throw new Error(`/openapi.json declares no event "${event.event}" for ${method} ${template}`);
      check(
        pointer('paths', template, method.toLowerCase(), 'responses', '200', 'x-sse-events', event.event),
        event.data,
        `event ${event.event} of ${method} ${template}`,
      );
    },
  };
}

/** Parses `event:`/`data:` blocks from the response body as they arrive. */
function sseStream(res: Response, checkEvent: (event: SseEvent) => void): SseStream {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId: string | undefined;
  // Blocks read and not handed out yet: an event, or an `id` line alone.
  const ready: Array<{ readonly id?: string; readonly event?: SseEvent }> = [];
  const fill = async () => {
    const { value, done } = await reader.read();
    if (done) throw new Error('the event stream ended');
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        lines
          .find((l) => l.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      const data = lines
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      const id = field('id');
      if (!data) {
        if (id !== undefined) ready.push({ id });
        continue;
      }
      const event = { event: field('event') ?? 'message', data: JSON.parse(data), ...(id !== undefined ? { id } : {}) };
      checkEvent(event);
      ready.push({ ...(id !== undefined ? { id } : {}), event });
    }
  };
  return {
    async next() {
      for (;;) {
        while (ready.length === 0) await fill();
        const block = ready.shift()!;
        if (block.id !== undefined) lastId = block.id;
        if (block.event) return block.event;
      }
    },
    cancel: () => reader.cancel(),
    lastEventId: () => lastId,
  };
}
