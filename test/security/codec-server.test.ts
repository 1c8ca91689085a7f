import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { parseKeyRing } from '../../src/security/key-ring';
import { EncryptionCodec, KEY_ID_METADATA } from '../../src/security/payload-codec';
import { codecServerFor, startCodecServer, type CodecServer } from '../../src/security/codec-server';
import { configFromEnv } from '../../src/config/keel-config';

const TOKEN = 'codec-token-0123456789abcdef';
const UI = 'http://localhost:8233';
const ring = parseKeyRing(`k1:${randomBytes(32).toString('base64')}`);

/** Temporal's codec-server JSON shape: metadata values and data in base64. */
const asJson = (p: { metadata?: Record<string, Uint8Array | null> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

describe('codec server', () => {
  let server: CodecServer;
  let base: string;
  beforeAll(async () => {
    server = await startCodecServer({
      codec: new EncryptionCodec(ring),
      token: TOKEN,
      origins: [UI],
      port: 0,
      host: '127.0.0.1',
    });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('encodes and decodes over HTTP with the bearer token; the encoded form hides the text', async () => {
    const plain = asJson(defaultPayloadConverter.toPayload({ text: 'PLANTED-over-http' }));
    const encoded = await post('/encode', { payloads: [plain] }, { authorization: `Bearer ${TOKEN}` });
    expect(encoded.status).toBe(200);
    const { payloads: sealed } = (await encoded.json()) as { payloads: Array<ReturnType<typeof asJson>> };
    expect(Buffer.from(sealed[0]!.metadata[KEY_ID_METADATA]!, 'base64').toString()).toBe('k1');
    expect(Buffer.from(sealed[0]!.data, 'base64').toString()).not.toContain('PLANTED');
    // The worker's codec opens what the server sealed, and the server opens it back to the original.
    const [opened] = await new EncryptionCodec(ring).decode([
      {
        metadata: Object.fromEntries(
          Object.entries(sealed[0]!.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
        ),
        data: Buffer.from(sealed[0]!.data, 'base64'),
      },
    ]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ text: 'PLANTED-over-http' });
    const decoded = await post(
      '/default/decode',
      { payloads: sealed },
      { authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default' },
    );
    expect(decoded.status).toBe(200);
    expect(((await decoded.json()) as { payloads: unknown[] }).payloads).toEqual([plain]);
  });

  it('refuses requests without the token, or with a wrong one, with 401 and decodes nothing', async () => {
    const [sealed] = await new EncryptionCodec(ring).encode([defaultPayloadConverter.toPayload('PLANTED-secret')]);
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }] as Array<
      Record<string, string>
    >) {
      const res = await post('/decode', { payloads: [asJson(sealed!)] }, headers);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('PLANTED');
    }
    // The Web UI cannot send a static header: the token as the first path segment works instead.
    const viaPath = await post(`/${TOKEN}/decode`, { payloads: [asJson(sealed!)] });
    expect(viaPath.status).toBe(200);
    expect(await viaPath.text()).toContain(Buffer.from(JSON.stringify('PLANTED-secret')).toString('base64'));
    expect((await post('/wrong-token/decode', { payloads: [asJson(sealed!)] })).status).toBe(401);
  });

  it('answers the Web UI preflight for configured origins only, echoing the origin with credentials', async () => {
    const preflight = await fetch(`${base}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const stranger = await fetch(`${base}/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('rejects malformed bodies and unknown paths with a clear error', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const bad = await post('/decode', { nope: true }, auth);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('no \\"payloads\\" array');
    expect((await post('/metrics', {}, auth)).status).toBe(404);
    expect((await fetch(`${base}/decode`, { headers: auth })).status).toBe(405);
  });

  it('is off by default, and on from the environment: KEEL_CODEC_SERVER_PORT, _TOKEN, _ORIGINS and the keys', async () => {
    expect(
      await codecServerFor(configFromEnv({ KEEL_ENCRYPTION_KEYS: `k1:${ring.key('k1').toString('base64')}` })),
    ).toBeUndefined();
    const config = configFromEnv({
      KEEL_ENCRYPTION_KEYS: `k1:${ring.key('k1').toString('base64')}`,
      KEEL_CODEC_SERVER_PORT: '0',
      KEEL_CODEC_SERVER_TOKEN: TOKEN,
      KEEL_CODEC_SERVER_ORIGINS: 'https://temporal.example.com/, https://other.example.com',
    });
    const configured = (await codecServerFor(config, '127.0.0.1'))!;
    try {
      const [sealed] = await new EncryptionCodec(ring).encode([
        defaultPayloadConverter.toPayload('PLANTED-configured'),
      ]);
      const res = await fetch(`http://127.0.0.1:${configured.port}/decode`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://temporal.example.com' },
        body: JSON.stringify({ payloads: [asJson(sealed!)] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://temporal.example.com');
      const [payload] = ((await res.json()) as { payloads: Array<ReturnType<typeof asJson>> }).payloads;
      expect(Buffer.from(payload!.data, 'base64').toString()).toBe('"PLANTED-configured"');
    } finally {
      await configured.close();
    }
    expect(() => configFromEnv({ KEEL_CODEC_SERVER_PORT: '8089', KEEL_CODEC_SERVER_TOKEN: TOKEN })).toThrow(
      /KEEL_CODEC_SERVER_PORT: a codec server without KEEL_ENCRYPTION_KEYS/,
    );
    expect(() =>
      configFromEnv({
        KEEL_ENCRYPTION_KEYS: `k1:${ring.key('k1').toString('base64')}`,
        KEEL_CODEC_SERVER_ORIGINS: 'localhost:8233',
      }),
    ).toThrow(/KEEL_CODEC_SERVER_ORIGINS: each origin is scheme:\/\/host\[:port\]/);
  });
});
