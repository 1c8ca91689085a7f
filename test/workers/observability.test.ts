/**
 * The worker's observability on the real path: a worker built like workers/main.ts builds it (pino as
 * Temporal's Runtime logger, Keel's metrics, the health endpoints) runs turns and a compaction sent
 * through the client; the test reads the JSON log lines and scrapes /metrics over HTTP.
 */
import { createServer } from 'node:net';
import { createServer as createHttpServer, type Server } from 'node:http';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { testDeps } from '../support/keel-deps';
import { keelClient, runInProcessWorker, uniqueTaskQueue } from '../support/temporal';
import { isFlushRequest, isSummarizerRequest, realisticMessage } from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { installObservability, serveObservability, type Observability } from '../../workers/observability';

const lines: Array<Record<string, any>> = [];
let obs: Observability;
/** A stand-in OTLP/HTTP collector: the bodies of the trace exports it received. */
const traceExports: string[] = [];
let collector: Server;

// Before the suite's dev server: the worker's runtime (pino into `lines`) must be the process's Temporal Runtime.
beforeAll(async () => {
  collector = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') traceExports.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
  const endpoint = `http://127.0.0.1:${(collector.address() as { port: number }).port}`;
  obs = installObservability(
    { KEEL_METRICS_PORT: String(await freePort()), KEEL_LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } },
  );
});
afterAll(async () => {
  await new Promise<void>((r) => collector.close(() => r()));
});

const suite = integrationSuite();

describe.each(testDatabases())('worker observability on $name', (database) => {
  const db = suite.storePerTest(database);

  it('logs one turn line per turn, a model_call line per call and a compaction line; /metrics has the series; /readyz is 200', async () => {
    lines.length = 0;
    traceExports.length = 0;
    const { env, fake } = suite;
    const taskQueue = uniqueTaskQueue();
    const agent = `obs-${taskQueue.slice(-8)}`;
    const key = `agent:${agent}:main`;
    const worker = await runInProcessWorker(
      env,
      taskQueue,
      { ...testDeps(db.store, fake.url), metrics: obs.metrics! },
      { plugins: obs.plugins },
    );
    const endpoints = await serveObservability(obs, worker.worker, {
      database: () => db.store.healthy(),
      temporal: () => env.nativeConnection.workflowService.getSystemInfo({}).then(() => true),
    });
    const base = `http://127.0.0.1:${endpoints!.port}`;
    try {
      const client = keelClient(env, taskQueue);
      fake.enqueue(fakeReply.text('first'));
      // A secret in the first message: startTurn's begin logs its redaction before it knows the session id from the input.
      const first = await client.sendMessage(
        key,
        realisticMessage('hello, deploy with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789', 30),
      );
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_obs', name: 'memory_search', input: { query: 'heron' } }]),
        fakeReply.text('second'),
      );
      const second = await client.sendMessage(key, 'search your memory');
      expect(second.modelCalls).toBe(2);
      fake.respondWith((request) =>
        isSummarizerRequest(request)
          ? goodSummarizer(request)
          : isFlushRequest(request)
            ? fakeReply.text('NO_REPLY')
            : undefined,
      );
      const compaction = await client.compact(key);
      fake.respondWith(undefined);
      expect(compaction.status).toBe('succeeded');

      // One turn line per turn: step latencies (one per model call), the turn's tokens as the client saw them.
      const turns = lines.filter((l) => l.msg === 'turn' && l.sessionKey === key);
      expect(turns).toHaveLength(2);
      expect(turns.map((t) => t.steps.model.length)).toEqual([1, 2]);
      for (const [t, reply] of [
        [turns[0]!, first],
        [turns[1]!, second],
      ] as const) {
        expect(t).toMatchObject({
          event: 'turn',
          agentId: agent,
          turn: reply.turn,
          modelCalls: reply.modelCalls,
          tokens: { input: reply.usage.inputTokens, output: reply.usage.outputTokens },
        });
        expect(t.workflowId).toEqual(expect.any(String));
        expect(t.sessionId).toEqual(expect.any(String));
        for (const step of ['begin', 'tools', 'finish']) expect(t.steps[step]).toEqual(expect.any(Number));
        expect(t.totalMs).toEqual(expect.any(Number));
      }
      expect(first.usage.inputTokens).toBeGreaterThan(0);

      // Activity lines carry the session (the interceptor) and the workflow and attempt (the SDK).
      const calls = lines.filter((l) => l.msg === 'model_call' && l.sessionKey === key);
      expect(calls.length).toBeGreaterThanOrEqual(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          agentId: agent,
          sessionId: turns[0]!.sessionId,
          activityType: expect.any(String),
          attempt: 1,
          workflowId: expect.any(String),
        });
        expect(c.tokens.output).toBeGreaterThan(0);
      }
      // A line the turn's begin logs names the session it found (the input carried only the key).
      const redacted = lines.find((l) => l.msg === 'redacted' && l.what === 'user_message' && l.sessionKey === key);
      expect(redacted).toMatchObject({
        activityType: 'startTurn',
        sessionId: turns[0]!.sessionId,
        turn: 1,
        redacted: { anthropic_key: 1 },
      });
      // ...and the turn's number: one call in turn 1, two in turn 2 (the compaction's calls have no turn).
      expect(calls.filter((c) => c.turn !== undefined).map((c) => c.turn)).toEqual([1, 2, 2]);
      // The first call built the window and ran the whole pipeline; turn two's calls read what was new
      // and ran only that through the pipeline (the worker's cached window).
      expect(calls.filter((c) => c.turn !== undefined).map((c) => [c.window, c.pipeline])).toEqual([
        ['miss', 'full'],
        ['hit', 'tail'],
        ['hit', 'tail'],
      ]);
      // What went out to the model matches what the line says was sent: the tool result in the second call of turn two.
      const toolCall = fake.requests.find((r) =>
        JSON.stringify(r.body.messages ?? []).includes('"tool_use_id":"toolu_obs"'),
      );
      expect(toolCall).toBeDefined();

      const compactionLine = lines.find((l) => l.msg === 'compaction' && l.sessionKey === key);
      expect(compactionLine).toMatchObject({
        event: 'compaction',
        trigger: 'manual',
        outcome: 'succeeded',
        tokensBefore: compaction.tokensBefore,
        tokensAfter: compaction.tokensAfter,
        durationMs: expect.any(Number),
      });
      expect(lines.find((l) => l.msg === 'memory_flush' && l.sessionKey === key)).toMatchObject({
        event: 'memory_flush',
        outcome: expect.stringMatching(/^(ran|skipped)$/),
      });

      // The metrics endpoint, over HTTP.
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(sample(metrics, `keel_turn_duration_seconds_count{agent="${agent}"}`)).toBe(2);
      expect(sample(metrics, `keel_tokens_total{agent="${agent}",kind="input"}`)).toBeGreaterThanOrEqual(
        first.usage.inputTokens + second.usage.inputTokens,
      );
      expect(sample(metrics, `keel_tokens_total{agent="${agent}",kind="output"}`)).toBeGreaterThan(0);
      expect(
        sample(metrics, `keel_model_call_duration_seconds_count{agent="${agent}",outcome="ok"}`),
      ).toBeGreaterThanOrEqual(3);
      expect(sample(metrics, `keel_compactions_total{trigger="manual",outcome="succeeded"}`)).toBeGreaterThanOrEqual(1);
      expect(sample(metrics, `keel_context_pressure_ratio{agent="${agent}"}`)).toBeGreaterThan(0);
      // The process's own series, for sizing a worker.
      expect(sample(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(
        sample(metrics, 'nodejs_heap_size_used_bytes'),
      );
      expect(sample(metrics, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);

      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ ok: true, checks: { worker: true, database: true, temporal: true } });

      await worker.stop();
      expect((await fetch(`${base}/healthz`)).status).toBe(503);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);

      // OTEL_EXPORTER_OTLP_ENDPOINT was set: the activities' spans reach the collector over OTLP/HTTP.
      await obs.flush();
      expect(traceExports.join('\n')).toContain('RunActivity:callModel');
    } finally {
      await worker.stop();
      await endpoints!.close();
    }
  });
});

/** The value of one series line of a Prometheus text exposition (NaN when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
