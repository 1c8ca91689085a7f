/**
 * The codec server the Temporal Web UI and CLI decode Keel's encrypted payloads through (Temporal's
 * codec-server protocol): `POST /encode` and `POST /decode` take and return
 * `{ payloads: [{ metadata: { key: base64 }, data: base64 }] }`. Also served under a namespace
 * segment (`/default/decode`), as the CLI's `--codec-endpoint` templating calls it.
 *
 * Every request needs the token: `Authorization: Bearer <KEEL_CODEC_SERVER_TOKEN>` (the CLI's
 * `--codec-auth`), or as the first path segment (`/<token>/decode`) for the Web UI, whose codec
 * settings take an endpoint URL but no static header. Browsers send a CORS preflight without
 * credentials; it is answered for the configured Web UI origins only.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { keyRingFor, type KeelConfig } from '../config/keel-config';
import { EncryptionCodec } from './payload-codec';

export interface CodecServerOptions {
  readonly codec: PayloadCodec;
  readonly token: string;
  /** Origins allowed cross-origin (the Web UI's), e.g. `http://localhost:8233`. */
  readonly origins: readonly string[];
  readonly port: number;
  readonly host?: string;
}

export interface CodecServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Requests larger than this are refused (a page of history is far smaller). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/**
 * The codec server the configuration asks for: on KEEL_CODEC_SERVER_PORT with the configured keys,
 * token and origins; undefined (off) when the port is not set.
 */
export async function codecServerFor(
  config: Pick<
    KeelConfig,
    'codecServerPort' | 'codecServerToken' | 'codecServerOrigins' | 'encryptionKeys' | 'encryptionKeyId'
  >,
  host?: string,
): Promise<CodecServer | undefined> {
  if (config.codecServerPort === undefined) return undefined;
  const ring = keyRingFor(config);
  // The config schema already refuses a port without keys or token; this names them again for code that built its config by hand.
  if (!ring || !config.codecServerToken)
    throw new Error(
      'KEEL_CODEC_SERVER_PORT is set but KEEL_ENCRYPTION_KEYS or KEEL_CODEC_SERVER_TOKEN is not; set both or unset the port',
    );
  return startCodecServer({
    codec: new EncryptionCodec(ring),
    token: config.codecServerToken,
    origins: config.codecServerOrigins,
    port: config.codecServerPort,
    ...(host ? { host } : {}),
  });
}

export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set(opts.origins.map((o) => o.replace(/\/+$/, '')));
  const server: Server = createServer((req, res) => {
    handle(req, res, opts, origins).catch((err: unknown) =>
      reply(res, 500, { message: err instanceof Error ? err.message : String(err) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`KEEL_CODEC_SERVER_PORT ${opts.port} is in use; choose another port`)
          : err,
      ),
    );
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: CodecServerOptions,
  origins: ReadonlySet<string>,
): Promise<void> {
  const origin = req.headers.origin;
  if (origin && origins.has(origin)) {
    // Echoed (never `*`): the Web UI may send credentials ("include cross-origin credentials").
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('vary', 'Origin');
  }
  if (req.method === 'OPTIONS') {
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'Content-Type, Authorization, X-Namespace');
    res.writeHead(204).end();
    return;
  }
  const segments = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
  const pathToken = segments.length > 1 ? segments[0] : undefined;
  const action = segments[segments.length - 1];
  if (action !== 'encode' && action !== 'decode')
    return reply(res, 404, { message: 'not found: POST /encode or /decode' });
  if (req.method !== 'POST') return reply(res, 405, { message: `use POST for /${action}` });
  const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!sameSecret(bearer, opts.token) && !sameSecret(pathToken, opts.token)) {
    return reply(res, 401, {
      message: 'the codec server needs its token: Authorization: Bearer <KEEL_CODEC_SERVER_TOKEN>',
    });
  }
  let payloads: Payload[];
  try {
    payloads = fromJson(JSON.parse(await readBody(req)));
  } catch (err) {
    return reply(res, 400, {
      message: `body must be {"payloads":[{"metadata":{…base64},"data":base64}]}: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
  const out = action === 'encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
  reply(res, 200, { payloads: out.map(toJson) });
}

/** Constant-time comparison (of digests, so lengths never leak either). */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fromJson(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new Error('no "payloads" array');
  return list.map((p: JsonPayload) => ({
    metadata: Object.fromEntries(
      Object.entries(p?.metadata ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64')]),
    ),
    data: Buffer.from(String(p?.data ?? ''), 'base64'),
  }));
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
