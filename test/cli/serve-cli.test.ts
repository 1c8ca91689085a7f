/**
 * `keel dev` serves the HTTP API beside its chat, and `keel serve` serves it for a running stack: real
 * processes, Node's fetch, the fake model.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel, startKeel, type LiveKeel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing/fake-anthropic';

const TOKEN = 'serve-cli-token-0123456789';

/** The API's URL a process printed on stderr (`api: http://…` from dev, `HTTP API on http://…` from serve). */
async function apiUrl(proc: LiveKeel, pattern: RegExp): Promise<string> {
  await proc.waitFor('stderr', pattern);
  return pattern.exec(proc.output().stderr)![1]!;
}

const post = (url: string, body: unknown, accept = 'application/json') =>
  fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  });

describe('keel serve and keel dev serve the HTTP API', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());

  it('keel dev prints its API URL and streams a reply over it; keel serve answers for that stack until SIGTERM', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-serve-'));
    const env = {
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
      KEEL_HOME: home,
      KEEL_API_PORT: '0',
      KEEL_API_TOKEN: TOKEN,
      ...fake.env,
    };
    const dev = startKeel(['dev'], env);
    try {
      const devUrl = await apiUrl(dev, /api: (http:\/\/127\.0\.0\.1:\d+)/);
      await dev.waitFor('stdout', 'you ›');
      fake.enqueue(
        fakeReply.text('Streaming over HTTP.', { chunks: ['Streaming ', 'over ', 'HTTP.'], eventDelayMs: 100 }),
      );
      const streamed = await post(
        `${devUrl}/v1/sessions/${encodeURIComponent('agent:api:main')}/messages`,
        { text: 'stream please' },
        'text/event-stream',
      );
      expect(streamed.status).toBe(200);
      const body = await streamed.text();
      expect(body.match(/^event: text$/gm)!.length).toBeGreaterThan(1);
      expect(body).toMatch(/^event: reply\ndata: \{"reply":"Streaming over HTTP\."/m);

      // keel serve reaches the same stack through its stack.json, on a port of its own.
      const serve = startKeel(['serve'], env);
      const serveUrl = await apiUrl(serve, /HTTP API on (http:\/\/127\.0\.0\.1:\d+)/);
      expect(serveUrl).not.toBe(devUrl);
      fake.enqueue(fakeReply.text('Answered through keel serve.'));
      const sent = await post(`${serveUrl}/v1/sessions/${encodeURIComponent('agent:api:main')}/messages`, {
        text: 'and through serve?',
      });
      expect(await sent.json()).toMatchObject({ reply: 'Answered through keel serve.', turn: 2 });
      const unauthorized = await fetch(`${serveUrl}/v1/sessions/${encodeURIComponent('agent:api:main')}`);
      expect(unauthorized.status).toBe(401);
      serve.signal('SIGTERM');
      const served = await serve.exited;
      expect(served.code).toBe(0);
      expect(served.stderr).toContain('keel serve: stopping');
      expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('and through serve?');
    } finally {
      await dev.end();
    }
    fake.assertScriptConsumed();
  }, 180_000);

  it('keel serve refuses a host beyond loopback without a token, before connecting anything; keel --help lists it', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-serve-refused-'));
    const run = await keel(['serve'], {
      KEEL_HOME: home,
      KEEL_API_HOST: '0.0.0.0',
      KEEL_API_TOKEN: undefined,
      TEMPORAL_ADDRESS: undefined,
      DATABASE_URL: undefined,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'KEEL_API_HOST 0.0.0.0 is reachable beyond this machine and KEEL_API_TOKEN is not set',
    );
    const help = await keel(['--help'], {});
    expect(help.stdout).toMatch(/^ {2}serve\b.*HTTP API/m);
  }, 60_000);
});
