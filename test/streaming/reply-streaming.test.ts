import { z } from 'zod';
import { temporal } from '@temporalio/proto';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite, type WorkerContext } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { KeelClient } from '../../src/client/keel-client';
import { PgReplyStreamSubscriber } from '../../src/streaming/pg-reply-subscriber';
import { replyStreamForStore } from '../../src/streaming/reply-stream-for-store';
import type { ReplyStreamSubscriber } from '../../src/streaming/reply-subscriber';
import { servePglite } from '../../src/embedded/pglite-server';
import { parseReplyChunk, replyChannel } from '../../src/streaming/reply-channel';
import { ToolRegistry } from '../../src/tools/registry';

const suite = integrationSuite();

/** What a client's callbacks saw of one send. */
interface Seen {
  deltas: string[];
  soFar: string[];
  restarts: string[];
  /** What the screen shows: deltas appended, a restart replacing it with its `soFar`. */
  shown: string;
}

function recorder(): {
  seen: Seen;
  onText: (delta: string, soFar: string) => void;
  onRestart: (soFar: string) => void;
} {
  const seen: Seen = { deltas: [], soFar: [], restarts: [], shown: '' };
  return {
    seen,
    onText: (delta, soFar) => {
      seen.deltas.push(delta);
      seen.soFar.push(soFar);
      seen.shown += delta;
    },
    onRestart: (soFar) => {
      seen.restarts.push(soFar);
      seen.shown = soFar;
    },
  };
}

/** Runs `fn` with a client that streams through the worker's store. */
async function withStreamingClient<T>(t: WorkerContext, fn: (client: KeelClient) => Promise<T>): Promise<T> {
  const stream: ReplyStreamSubscriber = replyStreamForStore(t.store);
  try {
    return await fn(
      new KeelClient({
        connection: suite.env.connection,
        namespace: suite.env.namespace,
        taskQueue: t.taskQueue,
        stream,
      }),
    );
  } finally {
    await stream.close();
  }
}

/** The history events whose payloads contain `needle`, by event type name. */
function eventsContaining(history: temporal.api.history.v1.IHistory, needle: string): string[] {
  const found: string[] = [];
  for (const event of history.events ?? []) {
    const texts: string[] = [];
    const walk = (value: unknown): void => {
      if (value === null || typeof value !== 'object') return;
      if (value instanceof Uint8Array) {
        texts.push(Buffer.from(value).toString('utf8'));
        return;
      }
      for (const child of Object.values(value as Record<string, unknown>)) walk(child);
    };
    walk(event);
    if (texts.some((t) => t.includes(needle)))
      found.push(temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType));
  }
  return found;
}

describe.each(testDatabases())('reply streaming on $name', (database) => {
  const db = suite.storePerTest(database);

  it('streams each model call of a tool loop in order while the turn runs, and keeps every delta out of Temporal history', async () => {
    // The tool runs between the two model calls: what the client heard by then streamed mid-turn.
    let heardDuringTool = '';
    let seen: Seen | undefined;
    const tools = new ToolRegistry().register({
      name: 'lookup_weather',
      description: 'Looks up the weather',
      input: z.object({ city: z.string() }),
      run: async () => {
        for (let i = 0; i < 100 && !seen!.shown.includes('checking the sky'); i++)
          await new Promise((r) => setTimeout(r, 50));
        heardDuringTool = seen!.shown;
        return 'sunny, 21 °C';
      },
    });
    await suite.withWorker(db.store, { tools }, async (t) => {
      const script = () => [
        fakeReply.toolUse([{ id: 'toolu_w', name: 'lookup_weather', input: { city: 'Lyon' } }], {
          text: 'Let me go checking the sky over Lyon.',
        }),
        fakeReply.text('Lyon is sunny and mild today, twenty-one degrees.', {
          chunks: ['Lyon is ', 'sunny and mild', ' today, ', 'twenty-one ', 'degrees.'],
        }),
      ];
      const key = `agent:${freshDurableAgent()}:main`;
      const firstRequest = t.fake.requests.length;
      t.fake.enqueue(...script());
      const rec = recorder();
      seen = rec.seen;
      const result = await withStreamingClient(t, (client) =>
        client.sendMessage(key, 'weather in Lyon?', { onText: rec.onText, onRestart: rec.onRestart }),
      );

      expect(result.reply).toBe('Lyon is sunny and mild today, twenty-one degrees.');
      expect(result.modelCalls).toBe(2);
      expect(heardDuringTool).toBe('Let me go checking the sky over Lyon.');
      expect(rec.seen.deltas.join('')).toBe(`Let me go checking the sky over Lyon.${result.reply}`);
      expect(rec.seen.soFar.at(-1)).toBe(rec.seen.deltas.join(''));
      expect(rec.seen.restarts).toEqual([]);
      // The model was asked twice, the second time with the tool's result.
      const requests = t.fake.requests.slice(firstRequest);
      expect(requests).toHaveLength(2);
      expect(JSON.stringify(requests[1]!.body.messages)).toContain('sunny, 21 °C');

      // Temporal history: the reply text only where the turn returns it (the model activity's result
      // and the outcome Update), and the same steps as the same turn without a listening client.
      const streamedHistory = await t.client.temporal.workflow
        .getHandle(t.client.identify(key).workflowId)
        .fetchHistory();
      expect(eventsContaining(streamedHistory, 'checking the sky')).toEqual(['EVENT_TYPE_ACTIVITY_TASK_COMPLETED']);
      expect(eventsContaining(streamedHistory, 'sunny and mild')).toEqual([
        'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
        'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED',
      ]);
      const plainKey = `agent:${freshDurableAgent()}:main`;
      t.fake.enqueue(...script());
      seen = { deltas: [], soFar: [], restarts: [], shown: 'checking the sky' };
      expect((await t.client.sendMessage(plainKey, 'weather in Lyon?')).reply).toBe(result.reply);
      const plainHistory = await t.client.temporal.workflow
        .getHandle(t.client.identify(plainKey).workflowId)
        .fetchHistory();
      // The same steps: no signal, activity or marker per delta. Workflow tasks and the client's outcome
      // Updates are left out: how many of each there are depends on timing, not on streaming.
      const steps = (h: typeof plainHistory) =>
        h
          .events!.map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType))
          .filter(
            (type) =>
              !type.startsWith('EVENT_TYPE_WORKFLOW_TASK_') &&
              !type.startsWith('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_'),
          );
      expect(steps(streamedHistory)).toEqual(steps(plainHistory));
    });
  }, 120_000);

  it('streams nothing of a NO_REPLY reply, and holds back a reply that only starts like one until it cannot be', async () => {
    await suite.withWorker(db.store, {}, async (t) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const firstRequest = t.fake.requests.length;
      t.fake.enqueue(
        fakeReply.text('NO_REPLY', { chunks: ['NO', '_RE', 'PLY'] }),
        fakeReply.text('NO_REPLY: nothing to add', { chunks: ['NO_', 'REPLY', ': nothing ', 'to add'] }),
        fakeReply.text('No problem, done.', { chunks: ['No', ' problem', ', done.'] }),
      );
      await withStreamingClient(t, async (client) => {
        const silent = recorder();
        const first = await client.sendMessage(key, 'housekeeping', silent);
        expect(first.silent).toBe(true);
        expect(silent.seen.deltas).toEqual([]);

        const prefixed = recorder();
        await client.sendMessage(key, 'more housekeeping', prefixed);
        expect(prefixed.seen.deltas).toEqual([]);

        const spoken = recorder();
        const third = await client.sendMessage(key, 'thanks', spoken);
        expect(third.reply).toBe('No problem, done.');
        expect(spoken.seen.deltas.join('')).toBe('No problem, done.');
        // 'No' alone could still become NO_REPLY: it is never shown on its own.
        expect(spoken.seen.soFar).not.toContain('No');
      });
      expect(t.fake.requests.length - firstRequest).toBe(3);
    });
  }, 120_000);

  it('discards what it showed of a model call that died mid-stream when the retry answers', async () => {
    await suite.withWorker(db.store, {}, async (t) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const firstRequest = t.fake.requests.length;
      t.fake.enqueue(
        // Slow events, so the first attempt's text is out before the connection dies.
        fakeReply.truncated('Draft words that will never finish because the line drops', 7, { eventDelayMs: 100 }),
        fakeReply.text('A complete second answer.', { chunks: ['A complete', ' second', ' answer.'] }),
      );
      const rec = recorder();
      const result = await withStreamingClient(t, (client) =>
        client.sendMessage(key, 'tell me', { onText: rec.onText, onRestart: rec.onRestart }),
      );

      expect(result.reply).toBe('A complete second answer.');
      // Both attempts asked the same thing.
      const requests = t.fake.requests.slice(firstRequest);
      expect(requests).toHaveLength(2);
      expect(requests[1]!.rawBody).toBe(requests[0]!.rawBody);
      expect(rec.seen.deltas.join('')).toContain('Draft');
      expect(rec.seen.restarts).toEqual(['']);
      expect(rec.seen.shown).toBe('A complete second answer.');
      expect(rec.seen.soFar.at(-1)).toBe('A complete second answer.');
    });
  }, 120_000);

  it('yields the same events through the async iterator, then the durable reply', async () => {
    await suite.withWorker(db.store, {}, async (t) => {
      const key = `agent:${freshDurableAgent()}:main`;
      t.fake.enqueue(fakeReply.text('Iterated reply text.', { chunks: ['Iterated', ' reply', ' text.'] }));
      const items = await withStreamingClient(t, async (client) => {
        const collected = [];
        for await (const item of client.streamMessage(key, 'go')) collected.push(item);
        return collected;
      });
      const last = items.at(-1)!;
      expect(last.type).toBe('reply');
      const texts = items.filter((i) => i.type === 'text');
      expect(texts.length).toBeGreaterThan(0);
      expect(texts.map((i) => i.delta).join('')).toBe('Iterated reply text.');
      expect(last.type === 'reply' && last.result.reply).toBe('Iterated reply text.');
    });
  }, 120_000);
  it('publishes nothing for a client that does not listen, and the reply chunks for one that does', async () => {
    await suite.withWorker(db.store, {}, async (t) => {
      const stream: ReplyStreamSubscriber = replyStreamForStore(t.store);
      try {
        // A third party listens on each request's channel: it hears what the worker publishes, whoever asked.
        const heard = async (client: KeelClient, requestId: string): Promise<string[]> => {
          const key = `agent:${freshDurableAgent()}:main`;
          const payloads: string[] = [];
          const stop = await stream.listen(
            replyChannel({ agentId: client.identify(key).agentId, sessionKey: key, requestId }),
            (p) => payloads.push(p),
          );
          try {
            t.fake.enqueue(fakeReply.text('Heard or not.', { chunks: ['Heard', ' or not.'] }));
            expect((await client.sendMessage(key, 'go', { requestId })).reply).toBe('Heard or not.');
          } finally {
            await stop();
          }
          return payloads;
        };
        expect(await heard(t.client, `quiet-${freshDurableAgent()}`)).toEqual([]);
        const streamed = await withStreamingClient(t, (client) => heard(client, `loud-${freshDurableAgent()}`));
        // The attempt's announcement, then the text with the end mark.
        expect(streamed.map((p) => parseReplyChunk(p)?.text ?? '').join('')).toBe('Heard or not.');
        expect(parseReplyChunk(streamed.at(-1))?.end).toBe(true);
      } finally {
        await stream.close();
      }
    });
  }, 120_000);

  // Only PGlite has the limitation: an application against `keel dev` listens through its socket.
  (database.name === 'pglite' ? it : it.skip)(
    'says once, through warn, that a PGlite served over a socket cannot stream, and the replies still arrive whole',
    async () => {
      await suite.withWorker(db.store, {}, async (t) => {
        const served = await servePglite(t.store.pglite!, t.store.pgliteLock!);
        const stream = new PgReplyStreamSubscriber({ connectionString: served.url });
        const warnings: string[] = [];
        try {
          const client = new KeelClient({
            connection: suite.env.connection,
            namespace: suite.env.namespace,
            taskQueue: t.taskQueue,
            stream,
            warn: (line) => warnings.push(line),
          });
          const key = `agent:${freshDurableAgent()}:main`;
          const rec = recorder();
          for (const text of ['one', 'two']) {
            t.fake.enqueue(fakeReply.text(`Reply ${text}.`, { chunks: ['Reply ', `${text}.`] }));
            expect((await client.sendMessage(key, text, { onText: rec.onText })).reply).toBe(`Reply ${text}.`);
          }
          expect(rec.seen.deltas).toEqual([]);
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toContain('replies will not stream');
          expect(warnings[0]).toContain('PGlite delivers NOTIFY only inside its own process');
        } finally {
          await stream.close();
          await served.close();
        }
      });
    },
    120_000,
  );
});
