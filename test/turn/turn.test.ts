import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { appendEntries } from '../../src/store/entries-repo';
import { getSession, setThinkingLevel } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import type { Store } from '../../src/store/connect';
import { ToolRegistry } from '../../src/tools/registry';
import { registerContextEngine } from '../../src/engine/registry';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';
import { testDeps } from '../support/keel-deps';
import { prepareContext } from '../../activities/parts/prepare-context';
import { StatementCounter } from '../support/statement-counter';
import { contextSeries } from '../../src/operations/sessions/context-series';

/** A message's text, whatever its shape (a string, or text blocks), for comparing what was sent with what was stored. */
function textOf(message: { content: unknown }): string {
  if (typeof message.content === 'string') return message.content;
  return (message.content as Array<{ type: string; text?: string }>)
    .map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`))
    .join('');
}

const suite = integrationSuite();

/** A fresh agent per test: session workflow ids never collide across tests or databases. */
function freshAgent(): string {
  return `t${Math.random().toString(36).slice(2, 10)}`;
}

function messagesOf(rows: Awaited<ReturnType<typeof allEntries>>): AgentMessage[] {
  return rows.filter((r) => r.type === 'message').map((r) => (r.payload as unknown as MessageEntry).message);
}

/** A stored history a crash or a hand edit could leave: an orphaned result, a call without one, two user turns in a row. */
async function seedCorruptedHistory(store: Store, agent: string, key: string): Promise<void> {
  const session = await ensureSession(store.db, {
    agentId: agent,
    sessionKey: key,
    newSessionId: `s-${agent}`,
    now: new Date(),
  });
  const at = new Date().toISOString();
  const corrupted: AgentMessage[] = [
    {
      role: 'toolResult',
      toolCallId: 'orphan',
      toolName: 'exec',
      content: [{ type: 'text', text: 'orphaned output' }],
    },
    { role: 'user', content: 'run ls' },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'call_1', name: 'exec', arguments: { cmd: 'ls' } }],
      stopReason: 'toolUse',
    },
    { role: 'user', content: 'never mind' },
  ];
  await appendEntries(
    store.db,
    agent,
    session.session_id,
    corrupted.map((message, i) => ({
      entry: { type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: at, message },
      tokenEstimate: 10,
    })),
  );
}

describe.each(testDatabases())('a durable turn on a real Temporal dev server and $name', (database) => {
  const db = suite.storePerTest(database);

  it('answers a message through an Update and stores the user and assistant entries once', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      fake.enqueue(fakeReply.text('Hello from the model'));
      const agent = freshAgent();
      const result = await client.sendMessage(`agent:${agent}:main`, 'Hi there');
      expect(result.reply).toBe('Hello from the model');
      expect(result.turn).toBe(1);

      const session = await getSession(store.db, agent, `agent:${agent}:main`);
      expect(session).toBeDefined();
      const messages = messagesOf(await allEntries(store.db, agent, session!.session_id));
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(messages[0]!.content).toBe('Hi there');
      // The model saw the user's text through the real SDK.
      const sent = fake.requests[fake.requests.length - 1]!.body.messages!;
      expect(JSON.stringify(sent)).toContain('Hi there');
      expect(session!.total_tokens_fresh).toBe(true);
    }));

  it('finishes a turn in its last model call: the reply and the usage in one statement, the window read once, no reply stream nobody listens to', async () => {
    // The worker's store, counted: what a turn costs the database.
    const counter = new StatementCounter();
    const counted = { ...db.store, db: db.store.db.withPlugin(counter) };
    // Without prompt caching the fake reports every prompt token as input_tokens.
    await suite.withWorker(counted, { config: { promptCaching: false } }, async ({ client, fake, store }) => {
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      fake.enqueue(fakeReply.text('first', { usage: { input_tokens: 100, output_tokens: 10 } }));
      await client.sendMessage(key, 'one');
      const from = counter.seen.length;
      fake.enqueue(fakeReply.text('second', { usage: { input_tokens: 200, output_tokens: 20 } }));
      expect((await client.sendMessage(key, 'two')).reply).toBe('second');
      const turnTwo = counter.seen.length;
      // The turn's begin reads the model's learned window with the session row; the model call uses it
      // for the prompt and the budget, and finishes the turn with it: no read of model_limits of its own.
      expect(counter.count('select model_limits', from)).toBe(0);
      expect(counter.seen.slice(from).filter((l) => l.includes('pg_notify'))).toEqual([]);
      // The user's message; the reply goes in with the usage (an UPDATE of the session carrying the INSERT).
      expect(counter.count('insert transcript_entries', from)).toBe(1);
      expect(counter.count('update sessions', from)).toBe(1);
      // Counted once per turn, whatever the step that counts it.
      const session = await getSession(store.db, agent, key);
      expect({ input: session!.input_tokens, output: session!.output_tokens }).toEqual({ input: 300, output: 30 });
      const messages = messagesOf(await allEntries(store.db, agent, session!.session_id));
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      // No beginTurn or finishTurn step in the session's history: a turn is one activity (startTurn
      // begins it and makes its only model call); the counters' load at start is the one local activity.
      const history = await client.temporal.workflow.getHandle(client.identify(key).workflowId).fetchHistory();
      const localActivities = history
        .events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
        .map(
          (e) =>
            (
              JSON.parse(
                Buffer.from(e.markerRecordedEventAttributes!.details!.data!.payloads![0]!.data!).toString('utf8'),
              ) as { activity_type: string }
            ).activity_type,
        );
      expect(localActivities).toEqual(['loadSessionCounters']);
      const activities = history
        .events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
        .filter((n) => n !== undefined);
      expect(activities).toEqual(['startTurn', 'startTurn']);
      // The session's quiet-period timer is started once, not around each turn.
      expect(history.events!.filter((e) => e.timerStartedEventAttributes).length).toBe(1);
      expect(history.events!.filter((e) => e.timerCanceledEventAttributes).length).toBe(0);
      // The turn read the session row once: its begin's read served the model call too. Abandoned tool
      // arguments are released by the statement that reads the last entry, not by one of their own.
      const turnStatements = counter.seen.slice(from, turnTwo);
      expect(turnStatements.filter((l) => l === 'select sessions')).toHaveLength(1);
      expect(turnStatements.filter((l) => l.startsWith('delete'))).toEqual([]);

      // A turn of two model calls (a tool call, then the answer) counts both calls' usage, once.
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_none', name: 'no_such_tool', input: {} }], {
          usage: { input_tokens: 400, output_tokens: 40 },
        }),
        fakeReply.text('third', { usage: { input_tokens: 800, output_tokens: 80 } }),
      );
      const third = await client.sendMessage(key, 'three');
      expect(third).toMatchObject({ reply: 'third', modelCalls: 2, usage: { inputTokens: 1200, outputTokens: 120 } });
      const after = await getSession(store.db, agent, key);
      expect({ input: after!.input_tokens, output: after!.output_tokens }).toEqual({ input: 1500, output: 150 });
    });
  });

  it('runs two Updates sent at once to one session one after the other', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      const seen: number[] = [];
      fake.respondWith((req) => {
        seen.push(req.body.messages!.length);
        return fakeReply.text(`reply ${seen.length}`, { delayMs: 300 });
      });
      const agent = freshAgent();
      const key = `agent:${agent}:telegram:dm:42`;
      const [a, b] = await Promise.all([client.sendMessage(key, 'first'), client.sendMessage(key, 'second')]);
      expect(new Set([a.turn, b.turn])).toEqual(new Set([1, 2]));
      // The second call saw the first turn's user and assistant messages: the turns did not overlap.
      expect(seen).toEqual([1, 3]);
      const session = await getSession(store.db, agent, key);
      const roles = messagesOf(await allEntries(store.db, agent, session!.session_id)).map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'user', 'assistant']);
    }));

  it('runs a tool call as an activity, feeds its result back, and answers an unknown tool with an error result', async () => {
    const keys: string[] = [];
    const tools = new ToolRegistry().register({
      name: 'add',
      description: 'Adds two numbers',
      input: z.object({ a: z.number(), b: z.number() }),
      run: async ({ a, b }, ctx) => {
        keys.push(ctx.idempotencyKey);
        return String(a + b);
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, fake }) => {
      fake.enqueue(
        fakeReply.toolUse([
          { id: 'toolu_1', name: 'add', input: { a: 2, b: 3 } },
          { id: 'toolu_2', name: 'no_such_tool', input: {} },
        ]),
        fakeReply.text('2 + 3 = 5'),
      );
      const result = await client.sendMessage(`agent:${freshAgent()}:main`, 'add 2 and 3');
      expect(result.reply).toBe('2 + 3 = 5');
      expect(result.modelCalls).toBe(2);
      expect(keys).toHaveLength(1);

      const second = fake.requests[fake.requests.length - 1]!.body.messages!;
      const results = second
        .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .filter((b: any) => b.type === 'tool_result');
      expect(results).toHaveLength(2);
      expect(results[0].content).toEqual([{ type: 'text', text: '5' }]);
      expect(results[1].is_error).toBe(true);
      expect(results[1].content[0].text).toContain('unknown tool "no_such_tool"');
    });
  });

  it('thinks at the agent’s level through a tool loop, sending the signed thinking back; a session’s level and a turn’s own win', () =>
    suite.withWorker(db.store, { config: { thinkingLevel: 'low' } }, async ({ client, store, fake }) => {
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      const thinking = { type: 'thinking' as const, thinking: 'The tool first.', signature: 'sig-loop-1' };
      fake.enqueue(
        {
          kind: 'message',
          content: [thinking, { type: 'tool_use', id: 'toolu_t1', name: 'no_such_tool', input: {} }],
        },
        fakeReply.text('done'),
      );
      expect((await client.sendMessage(key, 'use a tool')).reply).toBe('done');
      const [call, answer] = fake.requests.slice(-2).map((r) => r.body);
      // The agent's level: Anthropic's budget for "low", on top of the reply's own 4,096 tokens.
      for (const body of [call, answer])
        expect({ thinking: body!.thinking, max_tokens: body!.max_tokens }).toEqual({
          thinking: { type: 'enabled', budget_tokens: 2_048 },
          max_tokens: 4_096 + 2_048,
        });
      // The tool loop sends the reply that called the tool back with its signed thinking first, as the API requires.
      const loop = answer!.messages!;
      expect(loop[loop.length - 2]!.content[0]).toEqual({
        type: 'thinking',
        thinking: 'The tool first.',
        signature: 'sig-loop-1',
      });
      expect(fake.invalid).toEqual([]);

      // The session's own level (what `/think high` stores), then a turn that asks for none.
      await setThinkingLevel(store.db, agent, key, 'high');
      fake.enqueue(fakeReply.text('deep'), fakeReply.text('quick'));
      await client.sendMessage(key, 'think hard');
      expect(fake.requests[fake.requests.length - 1]!.body.thinking).toMatchObject({ type: 'enabled' });
      const high = fake.requests[fake.requests.length - 1]!.body.thinking as { budget_tokens: number };
      expect(high.budget_tokens).toBeGreaterThan(8_192);
      await client.sendMessage(key, 'answer fast', { thinking: 'off' });
      const off = fake.requests[fake.requests.length - 1]!.body;
      expect({ thinking: off.thinking, max_tokens: off.max_tokens }).toEqual({
        thinking: undefined,
        max_tokens: 4_096,
      });
      expect(fake.invalid).toEqual([]);
    }));

  it("sends the entries another worker appended between two turns, as a rebuild from the database would (the worker's window copy)", () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      fake.respondWith(() => fakeReply.text('ok'));
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      await client.sendMessage(key, 'first question');
      const { session_id: sessionId } = (await getSession(store.db, agent, key))!;
      // Another worker ran a turn of this session meanwhile: its exchange is in the database only.
      const [last] = (await allEntries(store.db, agent, sessionId)).slice(-1);
      const at = new Date().toISOString();
      const other: MessageEntry[] = [
        {
          type: 'message',
          id: 'other-u',
          parentId: last!.id,
          timestamp: at,
          message: { role: 'user', content: 'asked on the other worker' },
        },
        {
          type: 'message',
          id: 'other-a',
          parentId: 'other-u',
          timestamp: at,
          message: { role: 'assistant', content: [{ type: 'text', text: 'answered there' }], stopReason: 'stop' },
        },
      ];
      await appendEntries(
        store.db,
        agent,
        sessionId,
        other.map((entry) => ({ entry, tokenEstimate: 10 })),
      );
      const before = fake.requests.length;
      await client.sendMessage(key, 'third question');
      const sent = fake.requests.slice(before).map((r) => r.body.messages!.map(textOf));
      expect(sent).toHaveLength(1);
      // What a worker without a copy reads from the database (the reply to the third question aside).
      const reader = testDeps(store, 'http://127.0.0.1:9');
      const rebuilt = await prepareContext(reader, agent, key, sessionId, {
        window: reader.config.contextWindowTokens,
      });
      expect(rebuilt.windowLoad).toBe('miss');
      expect(sent[0]).toEqual(rebuilt.messages.slice(0, -1).map(textOf));
      expect(sent[0]).toEqual([
        'first question',
        'ok',
        'asked on the other worker',
        'answered there',
        'third question',
      ]);
    }));
});

describe('the turn sends repaired context', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('repairs a corrupted stored history (orphaned result, missing result, consecutive user turns) before the model sees it', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      await seedCorruptedHistory(store, agent, key);
      fake.enqueue(fakeReply.text('ok'));
      await client.sendMessage(key, 'hello again');

      const sent = fake.requests[fake.requests.length - 1]!.body.messages!;
      expect(sent[0]!.role).toBe('user');
      const text = JSON.stringify(sent);
      expect(text).not.toContain('orphaned output');
      // The call got a synthetic error result right after it, and no user text was lost.
      const callIndex = sent.findIndex(
        (m) => Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_use'),
      );
      const next = sent[callIndex + 1]!;
      expect(next.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1', is_error: true });
      for (const words of ['run ls', 'never mind', 'hello again']) expect(text).toContain(words);
      for (let i = 1; i < sent.length; i++) expect(sent[i]!.role).not.toBe(sent[i - 1]!.role);
    }));

  it("validates an OpenAI-compatible session's context by that provider's rules, not Anthropic's", () => {
    const config = { modelProvider: 'openai-compatible' as const, openAiBaseUrl: `${suite.fake.url}/v1` };
    return suite.withWorker(db.store, { config }, async ({ client, store, fake }) => {
      const agent = freshAgent();
      const key = `agent:${agent}:main`;
      await seedCorruptedHistory(store, agent, key);
      fake.enqueue(fakeReply.text('ok'));
      await client.sendMessage(key, 'hello again');

      const sent = fake.requests[fake.requests.length - 1]!.body.messages! as Array<{ role: string; content: unknown }>;
      // Pairing is repaired for every provider (the fake refuses a call without its result, as OpenAI does)…
      expect(JSON.stringify(sent)).not.toContain('orphaned output');
      // …but OpenAI takes two user turns in a row, so they are not merged as Anthropic's rules would.
      const users = sent.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
      expect(users).toHaveLength(3);
      expect(users.slice(1).map((u) => u.includes('never mind') || u.includes('hello again'))).toEqual([true, true]);
    });
  });
});

describe('the context engine lifecycle in a turn', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('the budgeted engine with a pruning TTL sends old tool output cleared after an idle gap longer than the TTL, in full after a short one', () =>
    suite.withWorker(
      db.store,
      {
        config: {
          contextEngine: 'budgeted',
          contextEngineOptions: { pruningTtl: 120_000, keepLastAssistants: 1, minPrunableToolChars: 1_000 },
        },
      },
      async ({ client, store, fake }) => {
        const agent = freshAgent();
        /** A finished turn that read a 4,000-character log, its last message `agoMs` before now. */
        const plant = async (key: string, agoMs: number) => {
          const session = await ensureSession(store.db, {
            agentId: agent,
            sessionKey: key,
            newSessionId: `s-${key.split(':')[2]}`,
            now: new Date(),
          });
          const start = Date.now() - agoMs - 3_000;
          const turn: AgentMessage[] = [
            { role: 'user', content: 'read the log' },
            {
              role: 'assistant',
              content: [{ type: 'toolCall', id: 'call_log', name: 'read', arguments: { path: 'app.log' } }],
              stopReason: 'toolUse',
            },
            {
              role: 'toolResult',
              toolCallId: 'call_log',
              toolName: 'read',
              content: [{ type: 'text', text: 'LOGLINE '.repeat(500) }],
            },
            { role: 'assistant', content: [{ type: 'text', text: 'the log is long' }], stopReason: 'stop' },
          ];
          await appendEntries(
            store.db,
            agent,
            session.session_id,
            turn.map((m, i) => ({
              entry: {
                type: 'message',
                id: `e${i}`,
                parentId: i ? `e${i - 1}` : null,
                timestamp: new Date(start + i * 1_000).toISOString(),
                message: { ...m, timestamp: start + i * 1_000 } as AgentMessage,
              },
              tokenEstimate: 10,
            })),
          );
        };
        const idleKey = `agent:${agent}:idle`;
        const busyKey = `agent:${agent}:busy`;
        await plant(idleKey, 10 * 60_000);
        await plant(busyKey, 0);
        const before = fake.requests.length;
        fake.enqueue(fakeReply.text('nothing new'), fakeReply.text('nothing new'));
        await client.sendMessage(idleKey, 'anything new?');
        await client.sendMessage(busyKey, 'anything new?');
        const [idle, busy] = fake.requests.slice(before).map((r) => JSON.stringify(r.body.messages));
        expect(idle).toContain('[cleared: 4000 chars of read output]');
        expect(idle).not.toContain('LOGLINE');
        expect(busy).toContain('LOGLINE '.repeat(500).trimEnd());
        expect(busy).not.toContain('[cleared:');
        // Not persisted: the stored result keeps its output.
        const stored = messagesOf(await allEntries(store.db, agent, 's-idle')).find((m) => m.role === 'toolResult');
        expect(JSON.stringify(stored)).toContain('LOGLINE');
        // The reply notes what its call went without, and the console's chart marks it there alone.
        const replies = async (sessionId: string) =>
          messagesOf(await allEntries(store.db, agent, sessionId)).filter((m) => m.role === 'assistant');
        expect((await replies('s-idle')).at(-1)).toMatchObject({
          pruned: { toolResults: 1, chars: 4000, providerTokens: 0 },
        });
        expect((await replies('s-busy')).at(-1)).not.toHaveProperty('pruned');
        const idleSeries = await contextSeries(store.db, agent, 's-idle');
        expect(idleSeries.prunes).toEqual([
          expect.objectContaining({ seq: idleSeries.points.at(-1)!.seq, toolResults: 1, chars: 4000 }),
        ]);
        expect((await contextSeries(store.db, agent, 's-busy')).prunes).toEqual([]);
      },
    ));

  it('assembles every model call through the configured engine and calls its afterTurn once, after the final reply', async () => {
    const afterTurns: Array<{ last: AgentMessage | undefined; contextTokens?: number | undefined }> = [];
    let assembles = 0;
    const unregister = registerContextEngine('recording', () => ({
      id: 'recording',
      ingest: async () => {},
      compact: async () => ({ delegated: true }),
      assemble: async ({ messages }) => {
        assembles++;
        return { messages, estimatedTokens: 100 };
      },
      afterTurn: async ({ messages, contextTokens }) =>
        void afterTurns.push({ last: messages[messages.length - 1], contextTokens }),
    }));
    const tools = new ToolRegistry().register({
      name: 'ping',
      description: 'Pings',
      input: z.object({}),
      run: async () => 'pong',
    });
    try {
      await suite.withWorker(db.store, { tools, config: { contextEngine: 'recording' } }, async ({ client, fake }) => {
        fake.enqueue(fakeReply.toolUse([{ id: 'toolu_p', name: 'ping', input: {} }]), fakeReply.text('pinged'));
        const result = await client.sendMessage(`agent:${freshAgent()}:main`, 'ping it');
        expect(result.reply).toBe('pinged');
        expect(assembles).toBe(2);
        expect(afterTurns).toHaveLength(1);
        expect(afterTurns[0]!.last).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'pinged' }] });
        expect(afterTurns[0]!.contextTokens).toBeGreaterThan(100);
      });
    } finally {
      unregister();
    }
  });
});
