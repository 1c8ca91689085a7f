/**
 * `keel serve`'s HTTP API on the real path: Node's fetch against the server, a real dev server and
 * worker behind it, the fake model. Every answer (each SSE event included) is checked against the
 * server's own /openapi.json by `startApi`'s client.
 */
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { allEntries } from '../support/store-readers';
import { waitUntil } from '../support/wait-until';
import { startApi, type ApiUnderTest, type SseEvent, type SseStream } from '../support/http-api';
import { getSession } from '../../src/store/sessions-repo';
import { checkApiBinding } from '../../src/api/serve-api';
import { Connection } from '@temporalio/client';
import { startCuttableProxy } from '../support/cuttable-proxy';
import { openStore, type Store } from '../../src/store/connect';
import { servePglite } from '../../src/embedded/pglite-server';

const suite = integrationSuite();
const MESSAGES = '/v1/sessions/{sessionKey}/messages';

/** Events until (and with) the first one named `last`. */
async function eventsUntil(stream: SseStream, last: string): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (;;) {
    const event = await stream.next();
    events.push(event);
    if (event.event === last) return events;
  }
}

describe.each(testDatabases())('the HTTP API on $name', (database) => {
  const db = suite.storePerTest(database);
  const withApi = (
    fn: (api: ApiUnderTest, t: Parameters<Parameters<typeof suite.withWorker>[2]>[0]) => Promise<void>,
    tools = {},
  ) =>
    suite.withWorker(db.store, tools, async (t) => {
      const api = await startApi(suite.env, t);
      try {
        await fn(api, t);
      } finally {
        await api.close();
      }
    });

  it('answers a message as JSON, streams the next as text events then one reply, and reads the status and the session list', () =>
    withApi(async (api, t) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const first = t.fake.requests.length;
      t.fake.enqueue(
        fakeReply.text('Hello from Keel.'),
        fakeReply.text('Lyon is sunny today.', { chunks: ['Lyon is ', 'sunny ', 'today.'], eventDelayMs: 100 }),
      );

      const sent = await api.call('POST', MESSAGES, {
        params: { sessionKey: key },
        body: { text: 'hello', requestId: 'req-json' },
      });
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({
        reply: 'Hello from Keel.',
        silent: false,
        sessionKey: key,
        requestId: 'req-json',
        turn: 1,
        modelCalls: 1,
      });
      expect(sent.body.usage.outputTokens).toBeGreaterThan(0);

      const stream = await api.stream('POST', MESSAGES, {
        params: { sessionKey: key },
        body: { text: 'weather in Lyon?' },
      });
      const events = await eventsUntil(stream, 'reply');
      const deltas = events.filter((e) => e.event === 'text').map((e) => e.data.delta as string);
      // The text came while the model wrote it, in more than one piece, before the reply.
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe('Lyon is sunny today.');
      expect(events.map((e) => e.event)).toEqual([...deltas.map(() => 'text'), 'reply']);
      expect(events.at(-1)!.data).toMatchObject({ reply: 'Lyon is sunny today.', sessionKey: key, turn: 2 });

      // What reached the model: each text, once.
      const requests = t.fake.requests.slice(first);
      expect(requests).toHaveLength(2);
      expect(JSON.stringify(requests[0]!.body.messages)).toContain('hello');
      expect(JSON.stringify(requests[1]!.body.messages)).toContain('weather in Lyon?');

      const status = await api.call('GET', '/v1/sessions/{sessionKey}', { params: { sessionKey: key } });
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({
        agentId: agent,
        sessionKey: key,
        turnsCompleted: 2,
        turns: 2,
        queuedTurns: 0,
      });
      expect(status.body.contextTokens).toBe((await t.client.getStatus(key)).contextTokens);

      const list = await api.call('GET', '/v1/sessions', { query: { agent } });
      const row = await getSession(t.store.db, agent, key);
      expect(list.body).toEqual({
        sessions: [expect.objectContaining({ sessionKey: key, agentId: agent, sessionId: row!.session_id, turns: 2 })],
      });

      // The session's thinking level: set through the API, sent with the next turn's call; a turn's own wins.
      const thinking = await api.call('POST', '/v1/sessions/{sessionKey}/thinking', {
        params: { sessionKey: key },
        body: { level: 'medium' },
      });
      expect(thinking.body).toEqual({ agentId: agent, sessionKey: key, level: 'medium', source: 'session' });
      t.fake.enqueue(fakeReply.text('thought'), fakeReply.text('quick'));
      await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'think' } });
      expect(t.fake.requests.at(-1)!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 8_192 });
      await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'quick', thinking: 'off' } });
      expect(t.fake.requests.at(-1)!.body.thinking).toBeUndefined();
      const badLevel = await api.call('POST', MESSAGES, {
        params: { sessionKey: key },
        body: { text: 'x', thinking: 'max' },
      });
      expect(badLevel.status).toBe(400);
      expect(JSON.stringify(badLevel.body)).toContain('thinking');
      const cleared = await api.call('POST', '/v1/sessions/{sessionKey}/thinking', {
        params: { sessionKey: key },
        body: { level: null },
      });
      expect(cleared.body).toMatchObject({ level: 'off', source: 'agent' });

      const document = await api.call('GET', '/openapi.json');
      expect(document.body.openapi).toBe('3.1.0');
      expect(Object.keys(document.body.paths).sort()).toEqual(
        [
          '/openapi.json',
          '/v1/approvals',
          '/v1/approvals/{id}',
          '/v1/compactions',
          '/v1/compactions/{id}/rerun',
          '/v1/compactions/{id}/retry',
          '/v1/compactions/{id}/revert',
          '/v1/console/overview',
          '/v1/console/sessions',
          '/v1/sessions',
          '/v1/sessions/{sessionKey}',
          '/v1/sessions/{sessionKey}/compact',
          '/v1/sessions/{sessionKey}/compactions',
          '/v1/sessions/{sessionKey}/context-series',
          '/v1/sessions/{sessionKey}/events',
          '/v1/sessions/{sessionKey}/replay',
          '/v1/sessions/{sessionKey}/subagents',
          '/v1/sessions/{sessionKey}/thinking',
          '/v1/sessions/{sessionKey}/transcript',
          '/v1/subagents/{id}/kill',
          '/v1/subagents/{id}/steer',
          MESSAGES,
        ].sort(),
      );
    }));

  it('a client that hangs up mid-stream does not cancel the turn: it completes and is stored once', () =>
    withApi(async (api, t) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const reply = 'one two three four five six';
      const first = t.fake.requests.length;
      t.fake.enqueue(
        fakeReply.text(reply, { chunks: ['one ', 'two ', 'three ', 'four ', 'five ', 'six'], eventDelayMs: 150 }),
      );
      const stream = await api.stream('POST', MESSAGES, {
        params: { sessionKey: key },
        body: { text: 'count to six', requestId: 'req-gone' },
      });
      expect((await stream.next()).event).toBe('text');
      await stream.cancel();

      await waitUntil(
        'the turn to complete in its session',
        async () => (await t.client.getStatus(key)).turnsCompleted === 1,
      );
      const row = await getSession(t.store.db, agent, key);
      const messages = (await allEntries(t.store.db, agent, row!.session_id)).filter((e) => e.type === 'message');
      expect(messages.map((e) => e.role)).toEqual(['user', 'assistant']);
      expect(JSON.stringify(messages[1])).toContain(reply);

      // Asking again under the same request id answers the stored reply: no second model call, no second entry.
      const again = await api.call('POST', MESSAGES, {
        params: { sessionKey: key },
        body: { text: 'count to six', requestId: 'req-gone' },
      });
      expect(again.body).toMatchObject({ reply, turn: 1 });
      expect(t.fake.requests.length - first).toBe(1);
      expect((await allEntries(t.store.db, agent, row!.session_id)).filter((e) => e.type === 'message')).toHaveLength(
        2,
      );
    }));

  it('compacts a session, lists the failed compaction and retries it', () =>
    withApi(async (api, t) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      // Replies of a real size: a summary of them is smaller, so the compaction reclaims tokens.
      t.fake.enqueue(
        fakeReply.text(realisticMessage('Noted: the API lives at /srv/api/main.ts.')),
        fakeReply.text(realisticMessage('Noted: deploy on PAY-1234 first.')),
      );
      await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'the API is /srv/api/main.ts' } });
      await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'deploy PAY-1234 first' } });

      // Every summarizer attempt fails: the extractive summary is written, and the record says degraded.
      t.fake.respondWith((r) =>
        isSummarizerRequest(r) ? fakeReply.serverError() : isFlushRequest(r) ? fakeReply.text('NO_REPLY') : undefined,
      );
      const compacted = await api.call('POST', '/v1/sessions/{sessionKey}/compact', {
        params: { sessionKey: key },
        body: { keepRecentTokens: 0, instructions: 'keep the paths' },
      });
      expect(compacted.status).toBe(200);
      expect(compacted.body).toMatchObject({ status: 'succeeded', degraded: true });

      const failed = await api.call('GET', '/v1/compactions', { query: { failed: 'true', agent } });
      expect(failed.body.compactions.map((c: { id: string }) => c.id)).toEqual([compacted.body.compactionId]);
      expect(failed.body.pausedSessions).toEqual([]);

      t.fake.respondWith(goodSummarizer);
      const retry = await api.call('POST', '/v1/compactions/{id}/retry', {
        params: { id: compacted.body.compactionId },
        query: { agent },
      });
      expect(retry.body).toMatchObject({ retryOf: compacted.body.compactionId, started: true });
      const result = (await t.client.temporal.workflow.getHandle(retry.body.workflowId).result()) as {
        compactionId: string;
        degraded: boolean;
      };
      expect(result).toMatchObject({ compactionId: retry.body.compactionId, degraded: false });

      const all = await api.call('GET', '/v1/compactions', { query: { agent } });
      expect(all.body.compactions.map((c: { id: string; retryOf: string | null }) => [c.id, c.retryOf])).toEqual([
        [retry.body.compactionId, compacted.body.compactionId],
        [compacted.body.compactionId, null],
      ]);
    }));
});

describe('the HTTP API refuses', () => {
  const db = suite.storePerTest(testDatabases()[0]!);
  const withApi = (opts: Parameters<typeof startApi>[2], fn: (api: ApiUnderTest) => Promise<void>) =>
    suite.withWorker(db.store, {}, async (t) => {
      const api = await startApi(suite.env, t, opts);
      try {
        await fn(api);
      } finally {
        await api.close();
      }
    });
  const expectProblem = (res: { status: number; contentType: string; body: any }, status: number, field?: string) => {
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status, ...(field ? { field } : {}) });
    expect(res.body.type).toMatch(/^urn:keel:problem:/);
  };

  it('a request without the bearer token, or with a wrong one, on every route (401)', () =>
    withApi({}, async (api) => {
      for (const token of [null, 'test-token-0123456789abcdeX', 'short']) {
        const routes: Array<['GET' | 'POST', string, Record<string, string>]> = [
          ['GET', '/openapi.json', {}],
          ['GET', '/v1/sessions', {}],
          ['GET', '/v1/sessions/{sessionKey}', { sessionKey: 'agent:main:main' }],
          ['POST', MESSAGES, { sessionKey: 'agent:main:main' }],
          ['GET', '/v1/compactions', {}],
        ];
        for (const [method, template, params] of routes) {
          const res = await api.call(method, template, {
            params,
            token,
            body: method === 'POST' ? { text: 'hi' } : undefined,
          });
          expectProblem(res, 401, 'Authorization');
          expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        }
      }
    }));

  it('a bad session key, body or parameter, naming the field (400)', () =>
    withApi({}, async (api) => {
      const post = (sessionKey: string, body: unknown) => api.call('POST', MESSAGES, { params: { sessionKey }, body });
      expectProblem(await post('agent::main', { text: 'hi' }), 400, 'sessionKey');
      expectProblem(await post('agent:main:main', {}), 400, 'text');
      expectProblem(await post('agent:main:main', { text: '   ' }), 400, 'text');
      expectProblem(await post('agent:main:main', { text: 'hi', colour: 'red' }), 400, 'body');
      expectProblem(await post('agent:main:main', '{"text": '), 400, 'body');
      expectProblem(
        await api.call('POST', '/v1/sessions/{sessionKey}/compact', {
          params: { sessionKey: 'agent:main:main' },
          body: { keepRecentTokens: -1 },
        }),
        400,
        'keepRecentTokens',
      );
      expectProblem(await api.call('GET', '/v1/sessions', { query: { active: 'soon' } }), 400, 'active');
      expectProblem(await api.call('GET', '/v1/compactions', { query: { failed: 'yes' } }), 400, 'failed');
    }));

  it('an unknown session, compaction, subagent run or route (404), and nothing is created', () =>
    withApi({}, async (api) => {
      const key = `agent:${freshDurableAgent()}:main`;
      expectProblem(
        await api.call('GET', '/v1/sessions/{sessionKey}', { params: { sessionKey: key } }),
        404,
        'sessionKey',
      );
      expectProblem(
        await api.call('GET', '/v1/sessions/{sessionKey}/events', { params: { sessionKey: key } }),
        404,
        'sessionKey',
      );
      expectProblem(
        await api.call('POST', '/v1/compactions/{id}/retry', { params: { id: 'no-such-compaction' } }),
        404,
        'id',
      );
      // An unknown subagent run: its id named, for kill and for steer.
      for (const verb of ['kill', 'steer'] as const) {
        const unknown = await api.call('POST', `/v1/subagents/{id}/${verb}`, {
          params: { id: 'no-such-run' },
          query: { agent: 'main' },
          body: verb === 'steer' ? { text: 'stop' } : undefined,
        });
        expectProblem(unknown, 404, 'id');
        expect(unknown.body).toMatchObject({ type: 'urn:keel:problem:unknown-subagent' });
        expect(unknown.body.detail).toContain('no subagent run no-such-run for agent main');
      }
      const none = await api.call('GET', '/v1/sessions');
      expect(none.body).toEqual({ sessions: [] });
      const route = await fetch(`${api.url}/v1/nowhere`, {
        headers: { authorization: 'Bearer test-token-0123456789abcdef' },
      });
      expect(route.status).toBe(404);
      expect(await route.json()).toMatchObject({ status: 404, type: 'urn:keel:problem:no-route' });
    }));

  it('a body or a text past the size limits (413)', () =>
    withApi({}, async (api) => {
      expectProblem(
        await api.call('POST', MESSAGES, {
          params: { sessionKey: 'agent:main:main' },
          body: { text: 'x'.repeat(200_001) },
        }),
        413,
        'text',
      );
      expectProblem(
        await api.call('POST', MESSAGES, {
          params: { sessionKey: 'agent:main:main' },
          body: { text: 'x'.repeat(3 * 1024 * 1024) },
        }),
        413,
        'body',
      );
      expectProblem(
        await api.call('POST', '/v1/sessions/{sessionKey}/compact', {
          params: { sessionKey: 'agent:main:main' },
          body: { instructions: 'x'.repeat(200_001) },
        }),
        413,
        'instructions',
      );
    }));

  it("a turn that fails in its session (502, naming the failure type), as JSON and as the stream's error event", () =>
    suite.withWorker(db.store, {}, async (t) => {
      const api = await startApi(suite.env, t);
      try {
        const key = `agent:${freshDurableAgent()}:main`;
        t.fake.enqueue(fakeReply.authError(), fakeReply.authError());
        const sent = await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'hello' } });
        expectProblem(sent, 502);
        expect(sent.body).toMatchObject({ type: 'urn:keel:problem:request-failed', failureType: 'KeelModelAuth' });
        const stream = await api.stream('POST', MESSAGES, {
          params: { sessionKey: key },
          body: { text: 'hello again' },
        });
        expect(await stream.next()).toEqual({
          event: 'error',
          data: expect.objectContaining({ status: 502, failureType: 'KeelModelAuth' }),
        });
      } finally {
        await api.close();
      }
    }));

  it('an agent KEEL_ALLOWED_AGENTS leaves out (403), and serves without a token on loopback only', async () => {
    await withApi({ allowedAgents: ['ops'], token: null }, async (api) => {
      expectProblem(
        await api.call('POST', MESSAGES, { params: { sessionKey: 'agent:main:main' }, body: { text: 'hi' } }),
        403,
        'sessionKey',
      );
      expectProblem(await api.call('GET', '/v1/sessions', { query: { agent: 'main' } }), 403, 'agent');
      expect((await api.call('GET', '/v1/sessions')).status).toBe(200);
    });
    expect(() => checkApiBinding('0.0.0.0', undefined)).toThrow(/KEEL_API_HOST 0\.0\.0\.0 .*KEEL_API_TOKEN is not set/);
    expect(() => checkApiBinding('0.0.0.0', 'test-token-0123456789abcdef')).not.toThrow();
    expect(() => checkApiBinding('127.0.0.1', undefined)).not.toThrow();
  });
});

describe('the HTTP API without Temporal', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('answers 503 naming TEMPORAL_ADDRESS and the address tried when Temporal stops answering', () =>
    suite.withWorker(db.store, {}, async (t) => {
      const [host, port] = suite.env.address.split(':');
      const proxy = await startCuttableProxy({ host: host!, port: Number(port) });
      const address = `${proxy.host}:${proxy.port}`;
      const connection = await Connection.connect({ address });
      const api = await startApi(suite.env, t, { temporal: { connection, address } });
      try {
        const key = `agent:${freshDurableAgent()}:main`;
        t.fake.enqueue(fakeReply.text('still here'));
        expect(
          (await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: 'hello' } })).status,
        ).toBe(200);
        proxy.cut();
        const status = await api.call('GET', '/v1/sessions/{sessionKey}', { params: { sessionKey: key } });
        expect(status.status).toBe(503);
        expect(status.body.detail).toContain(`cannot reach Temporal at ${address} (TEMPORAL_ADDRESS)`);
        // The database still answers: the list does not need Temporal.
        expect((await api.call('GET', '/v1/sessions')).status).toBe(200);
      } finally {
        await api.close();
        await connection.close();
        await proxy.close();
      }
    }));
});

describe.each(testDatabases())('the HTTP API without its database on $name', (database) => {
  const db = suite.storePerTest(database);

  /**
   * The worker's database over the wire (PostgreSQL as it is; PGlite served on a socket), behind a
   * proxy the test cuts: only the API loses it, the worker keeps its own way in.
   */
  async function apiStoreBehindProxy(store: Store) {
    const served = store.pglite ? await servePglite(store.pglite, store.pgliteLock!) : undefined;
    const url = new URL(served?.url ?? (store.target as { url: string }).url);
    const proxy = await startCuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const apiStore = await openStore(
      { kind: 'postgres', url: url.toString(), ...(served ? { preparedStatements: false } : {}) },
      { log: () => undefined, migrate: false },
    );
    return {
      apiStore,
      proxy,
      close: async () => {
        await apiStore.close();
        await proxy.close();
        await served?.close();
      },
    };
  }

  it('answers 503 naming DATABASE_URL on a read and on a message while the database is away, and recovers', () =>
    suite.withWorker(db.store, {}, async (t) => {
      const { apiStore, proxy, close } = await apiStoreBehindProxy(t.store);
      const api = await startApi(suite.env, t, { store: apiStore });
      try {
        const key = `agent:${freshDurableAgent()}:main`;
        const send = (text: string) => api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text } });
        t.fake.enqueue(fakeReply.text('before'), fakeReply.text('after'));
        expect((await send('hello')).status).toBe(200);
        const calls = t.fake.requests.length;

        proxy.cut();
        for (const res of [await api.call('GET', '/v1/sessions'), await send('while away')]) {
          expect(res.status).toBe(503);
          expect(res.contentType).toBe('application/problem+json');
          expect(res.body).toMatchObject({ type: 'urn:keel:problem:unavailable', status: 503 });
          expect(res.body.detail).toContain(`cannot reach the database at`);
          expect(res.body.detail).toContain(`${proxy.host}:${proxy.port}`);
          expect(res.body.detail).toContain('(DATABASE_URL)');
        }
        // The refused message never reached the session: no model call, no turn.
        expect(t.fake.requests.length).toBe(calls);
        expect((await t.client.getStatus(key)).turnsCompleted).toBe(1);

        proxy.restore();
        await waitUntil('the API to read again', async () => (await api.call('GET', '/v1/sessions')).status === 200);
        const back = await send('back again');
        expect(back.status).toBe(200);
        expect(back.body).toMatchObject({ reply: 'after', turn: 2 });
      } finally {
        await api.close();
        await close();
      }
    }));
});
