/**
 * `GET /v1/sessions/{sessionKey}/events` on the real path: a parent session spawns subagents through
 * the fake model, they report back, and every stream reads the reports and answers from the
 * transcript with its own cursor. Each event is checked against /openapi.json by `startApi`.
 */
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, routedResponder } from '../support/durable-turn-helpers';
import { reportReader, reportTask, reportTools } from '../support/report-parts';
import { waitUntil } from '../support/wait-until';
import { startApi, type ApiUnderTest, type SseEvent, type SseStream } from '../support/http-api';
import { CITIES, PARENT_PROMPT, lookupTools, messageText, subagentResponder } from '../subagents/subagent-script';
import { collectAnnounceReplies, type AnnounceReply } from '../../src/cli/chat-watch';
import { sessionEventsChannel } from '../../src/streaming/session-events-channel';
import { fakeReply } from '../../src/testing/fake-anthropic';
import type { WorkerContext } from '../support/integration';

const suite = integrationSuite();
const EVENTS = '/v1/sessions/{sessionKey}/events';
const MESSAGES = '/v1/sessions/{sessionKey}/messages';

async function take(stream: SseStream, count: number): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  while (events.length < count) events.push(await stream.next());
  return events;
}

/** The parent's runs, as the store recorded them. */
async function runsOf(t: WorkerContext, key: string) {
  return t.store.db
    .selectFrom('subagent_runs')
    .select(['id', 'label', 'status'])
    .where('parent_session_key', '=', key)
    .execute();
}

/** Every run has reported and the parent has answered each report: `turns` turns completed. */
async function allAnswered(t: WorkerContext, key: string, runs: number): Promise<void> {
  await waitUntil(
    `${runs} reports answered`,
    async () => (await t.client.getStatus(key)).turnsCompleted === runs + 1,
    110_000,
  );
}

describe.each(testDatabases())('session events on $name', (database) => {
  const db = suite.storePerTest(database);
  const withApi = (
    options: Parameters<typeof suite.withWorker>[1],
    fn: (api: ApiUnderTest, t: WorkerContext) => Promise<void>,
    apiOptions: Parameters<typeof startApi>[2] = {},
  ) =>
    suite.withWorker(db.store, options, async (t) => {
      const api = await startApi(suite.env, t, apiOptions);
      try {
        await fn(api, t);
      } finally {
        await api.close();
      }
    });

  it("two streams and the chat's collector each get the subagent's report and the session's answer once", () =>
    withApi({ tools: lookupTools() }, async (api, t) => {
      const key = `agent:main:events-${database.name}-${freshDurableAgent()}`;
      const before = t.fake.requests.length;
      t.fake.respondWith(subagentResponder({ cities: [CITIES[0]!], childReplyDelayMs: 1_000 }));
      const sent = await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: PARENT_PROMPT } });
      expect(sent.body.reply).toBe('Waiting for my subagents.');

      // From the session's start: what happened before a stream opened is not lost to it.
      const first = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
      const second = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
      // The chat collects the same answers from the session workflow, at the same time.
      const collected: AnnounceReply[] = [];
      const collecting = waitUntil('the chat to collect the answer', async () => {
        collected.push(...(await collectAnnounceReplies(t.client, key)));
        return collected.length > 0;
      });
      const [a, b] = await Promise.all([take(first, 2), take(second, 2)]);
      await collecting;
      await Promise.all([first.cancel(), second.cancel()]);

      const [run] = await runsOf(t, key);
      expect(a).toEqual([
        {
          event: 'report',
          id: expect.stringMatching(/^\d+$/),
          data: { requestId: expect.any(String), subagentId: run!.id, text: expect.stringContaining(CITIES[0]!) },
        },
        {
          event: 'announce',
          id: expect.stringMatching(/^\d+$/),
          data: { requestId: a[0]!.data.requestId, subagentId: run!.id, reply: `Noted ${CITIES[0]}.` },
        },
      ]);
      expect(a[0]!.data.requestId).toMatch(new RegExp(`^announce:${run!.id}:`));
      expect(Number(a[1]!.id)).toBeGreaterThan(Number(a[0]!.id));
      // The same events, with the same ids, on both streams; the chat got the answer too, once.
      expect(b).toEqual(a);
      expect(collected).toEqual([
        { requestId: a[1]!.data.requestId, subagentId: run!.id, reply: `Noted ${CITIES[0]}.` },
      ]);
      // What the report's event carries is what reached the model as the parent's message.
      const lastMessages = t.fake.requests.slice(before).map((r) => messageText(r.body.messages?.at(-1)));
      const answered = lastMessages.filter((text) => text.includes('[Subagent'));
      expect(answered).toHaveLength(1);
      expect(answered[0]).toContain(a[0]!.data.text.slice(0, 60));

      // Nothing was taken from the transcript: a later stream from the start reads the same two.
      const later = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
      expect(await take(later, 2)).toEqual(a);
      await later.cancel();

      // A steer of the ended run is refused; the server says so in its log, not on stderr.
      const stderr = jest.spyOn(process.stderr, 'write');
      try {
        const steer = await api.call('POST', '/v1/subagents/{id}/steer', {
          params: { id: run!.id },
          query: { agent: 'main' },
          body: { text: 'one more thing' },
        });
        expect(steer.body).toMatchObject({ id: run!.id, sent: false });
        expect(stderr.mock.calls.map((c) => String(c[0]))).not.toContainEqual(
          expect.stringContaining(steer.body.message),
        );
        expect(api.logLines).toContainEqual(expect.objectContaining({ subagentId: run!.id, msg: steer.body.message }));
      } finally {
        stderr.mockRestore();
      }
    }));

  it('with ?progress=true, a running turn shows its model calls and tokens against its budget as it goes', () =>
    withApi(
      { tools: reportTools(), config: { contextWindowTokens: 32_000, reserveTokens: 4_000, reserveTokensFloor: 0 } },
      async (api, t) => {
        const key = `agent:main:progress-${freshDurableAgent()}`;
        t.fake.respondWith(
          routedResponder((r) =>
            JSON.stringify(r.body.messages).includes('all 12 parts')
              ? { ...reportReader(r), delayMs: 150 }
              : fakeReply.text('hi'),
          ),
        );
        // The session exists before its stream opens (a stream of an unknown session is a 404).
        await t.client.sendMessage(key, 'hello, before the long run');
        const stream = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { progress: 'true' } });
        const running = t.client.sendMessage(key, reportTask(12), {
          budget: { maxModelCalls: 50, maxTokens: 900_000 },
        });
        const seen: SseEvent[] = [];
        while (!seen.some((e) => e.event === 'progress' && Number(e.data.modelCalls) >= 3))
          seen.push(await stream.next());
        await stream.cancel();
        expect((await running).reply).toBe('Done: all 12 parts read.');
        const progress = seen.filter((e) => e.event === 'progress');
        expect(progress.at(-1)!.data).toMatchObject({
          modelCalls: expect.any(Number),
          tokens: expect.any(Number),
          budget: { maxModelCalls: 50, maxTokens: 900_000 },
          compactions: 0,
        });
        // Each says something new: the model calls only go up.
        const calls = progress.map((e) => Number(e.data.modelCalls));
        expect(calls).toEqual([...calls].sort((x, y) => x - y));
      },
    ));

  it('a stream that reconnects with Last-Event-ID, or ?after=, gets exactly what it missed', () =>
    withApi({ tools: lookupTools() }, async (api, t) => {
      const key = `agent:main:resume-${database.name}-${freshDurableAgent()}`;
      // The children answer one after another, so the first stream hangs up between reports.
      const delays: Record<string, number> = { [CITIES[0]!]: 0, [CITIES[1]!]: 3_000, [CITIES[2]!]: 6_000 };
      t.fake.respondWith(subagentResponder({ childReplyDelayMs: (city) => delays[city]! }));
      await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: PARENT_PROMPT } });

      const gone = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
      const seen = await take(gone, 1);
      const lastId = gone.lastEventId()!;
      await gone.cancel();
      expect(lastId).toBe(seen[0]!.id);
      await allAnswered(t, key, CITIES.length);

      const whole = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
      const all = await take(whole, 2 * CITIES.length);
      await whole.cancel();
      expect(all[0]).toEqual(seen[0]);

      const header = await api.stream('GET', EVENTS, {
        params: { sessionKey: key },
        headers: { 'last-event-id': lastId },
      });
      expect(await take(header, all.length - 1)).toEqual(all.slice(1));
      await header.cancel();

      // `after` resumes the same way; the header wins over it.
      const query = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: all[2]!.id! } });
      expect(await take(query, all.length - 3)).toEqual(all.slice(3));
      await query.cancel();
      const both = await api.stream('GET', EVENTS, {
        params: { sessionKey: key },
        query: { after: '0' },
        headers: { 'last-event-id': all[4]!.id! },
      });
      expect(await take(both, 1)).toEqual([all[5]]);
      await both.cancel();

      // A bad position is a 400 naming it.
      const bad = await api.call('GET', EVENTS, { params: { sessionKey: key }, headers: { 'last-event-id': 'x' } });
      expect(bad.status).toBe(400);
      expect(bad.body.field).toBe('last-event-id');
    }));

  it("wakes on the session's notice: a stream that would not poll for minutes hears the report and the answer", () =>
    withApi(
      { tools: lookupTools() },
      async (api, t) => {
        const key = `agent:main:notice-${database.name}-${freshDurableAgent()}`;
        t.fake.respondWith(subagentResponder({ cities: [CITIES[1]!], childReplyDelayMs: 3_000 }));
        await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: PARENT_PROMPT } });
        // Read once at the start; the report lands seconds later, so only the NOTIFY brings the events.
        const stream = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
        const events = await take(stream, 2);
        await stream.cancel();
        expect(events.map((e) => [e.event, e.data.subagentId])).toEqual([
          ['report', events[0]!.data.subagentId],
          ['announce', events[0]!.data.subagentId],
        ]);
        expect(events[1]!.data.reply).toBe(`Noted ${CITIES[1]}.`);
      },
      { eventsPollMs: 600_000 },
    ));

  it("streams the session's answers to a cron job and a heartbeat as `system` events, and nothing of a user's turn", () =>
    withApi(
      {},
      async (api, t) => {
        const key = `agent:main:system-${database.name}-${freshDurableAgent()}`;
        t.fake.enqueue(
          fakeReply.text('hello'),
          fakeReply.text('Nightly report: 3 invoices overdue.'),
          fakeReply.text('sure'),
          fakeReply.text('NO_REPLY'),
        );
        await t.client.sendMessage(key, 'hi');
        // From now: the stream wakes on the notice its answer sends (it would not poll for minutes).
        const stream = await api.stream('GET', EVENTS, { params: { sessionKey: key } });
        await t.client.sendMessage(key, 'Run the nightly invoice check.', { event: 'cron' });
        await t.client.sendMessage(key, 'what is overdue?');
        await t.client.sendMessage(key, 'Heartbeat: anything to report?', { event: 'heartbeat' });
        const events = await take(stream, 2);
        await stream.cancel();
        expect(events.map((e) => [e.event, e.data])).toEqual([
          [
            'system',
            { event: 'cron', text: 'Run the nightly invoice check.', reply: 'Nightly report: 3 invoices overdue.' },
          ],
          ['system', { event: 'heartbeat', text: 'Heartbeat: anything to report?', reply: null }],
        ]);
        // The stored user entries say which event wrote them; a user's message says nothing.
        const users = await t.store.db
          .selectFrom('transcript_entries')
          .select('payload')
          .innerJoin('sessions', (j) =>
            j.onRef('sessions.session_id', '=', 'transcript_entries.session_id').on('sessions.session_key', '=', key),
          )
          .where('transcript_entries.role', '=', 'user')
          .orderBy('transcript_entries.seq')
          .execute();
        expect(users.map((u) => (u.payload as { systemEvent?: string }).systemEvent ?? null)).toEqual([
          null,
          'cron',
          null,
          'heartbeat',
        ]);
      },
      { eventsPollMs: 600_000 },
    ));

  it(
    'twenty subagent runs: forty events in transcript order, each once, each report followed by its answer',
    () =>
      withApi({ tools: lookupTools(), config: { subagentMaxChildren: 20 } }, async (api, t) => {
        const key = `agent:main:many-${database.name}-${freshDurableAgent()}`;
        const cities = Array.from({ length: 20 }, (_, i) => `City${String.fromCharCode(97 + i)}`);
        t.fake.respondWith(subagentResponder({ cities }));
        await api.call('POST', MESSAGES, { params: { sessionKey: key }, body: { text: PARENT_PROMPT } });
        // Listening from the session's start while the reports arrive.
        const stream = await api.stream('GET', EVENTS, { params: { sessionKey: key }, query: { after: '0' } });
        const events = await take(stream, 40);
        await stream.cancel();

        const ids = events.map((e) => Number(e.id));
        expect(ids).toEqual([...ids].sort((x, y) => x - y));
        expect(new Set(ids).size).toBe(40);
        const runs = await runsOf(t, key);
        expect(runs).toHaveLength(20);
        const labelOf = new Map(runs.map((r) => [r.id, r.label]));
        for (let i = 0; i < events.length; i += 2) {
          const [report, answer] = [events[i]!, events[i + 1]!];
          expect(report.event).toBe('report');
          expect(answer).toEqual({
            event: 'announce',
            id: expect.any(String),
            data: {
              requestId: report.data.requestId,
              subagentId: report.data.subagentId,
              reply: `Noted ${labelOf.get(report.data.subagentId)}.`,
            },
          });
        }
        expect(new Set(events.map((e) => e.data.subagentId))).toEqual(new Set(runs.map((r) => r.id)));
      }),
    240_000,
  );
});

describe('the session events channel', () => {
  it('is a valid PostgreSQL identifier for any session key, and differs per session', () => {
    const a = sessionEventsChannel({ agentId: 'main', sessionKey: 'agent:main:a "quoted" key' });
    const b = sessionEventsChannel({ agentId: 'main', sessionKey: 'agent:main:b' });
    expect(a).toMatch(/^keel_events_[0-9a-f]{40}$/);
    expect(a).not.toBe(b);
  });
});
