/**
 * Every kind of model call survives a database outage that starts while the model answers, without
 * calling the model twice: a turn's reply with tool calls, its final reply, the memory flush's rounds
 * and the summarizer's calls. With payload encryption off, tool calls never enter Temporal's history
 * (the worker's memo of received replies holds them); with it on, the heartbeat hold does too. A
 * tool that finishes while the database is away runs once, and the model reads its real output.
 * PostgreSQL only: the worker reaches it through a TCP proxy the test cuts.
 */
import { randomBytes, createHash } from 'node:crypto';
import { z } from 'zod';
import { describeOnPostgres } from '../support/postgres-only';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing/fake-anthropic';
import { integrationSuite } from '../support/integration';
import {
  endsWithToolResult,
  flushStep,
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  seedConversation,
} from '../support/durable-turn-helpers';
import { goodSummarizer, promptOf } from '../compaction-workflow/support';
import { cuttablePostgresPerTest } from '../support/postgres-behind-proxy';
import { waitUntil } from '../support/wait-until';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const url = process.env.TEST_DATABASE_URL;
const suite = integrationSuite();
const TURNS = 4;
/** How long the database stays away once a write was refused: turns retry without limit, a summarizer chunk 3 times within seconds. */
const HOLD_MS = { turn: 3_000, flush: 1_000, summarizer: 0 } as const;
type CallKind = keyof typeof HOLD_MS;
/** How long the database stays away once a tool's write was refused. */
const TOOL_OUTAGE_MS = 6_000;

/** What one model call is, so a repeated call is counted against the same name. */
function logicalCall(request: FakeRequest): { kind: CallKind; name: string } {
  const round = endsWithToolResult(request) ? 'after tools' : 'first';
  if (isSummarizerRequest(request))
    return {
      kind: 'summarizer',
      name: `summarizer ${createHash('sha256').update(promptOf(request)).digest('hex').slice(0, 12)}`,
    };
  if (isFlushRequest(request)) return { kind: 'flush', name: `flush ${round}` };
  return { kind: 'turn', name: `${lastUserText(request)} ${round}` };
}

/** Which calls the database goes away during: a tool-call reply, a final reply, the flush's first round, the first summarizer call. */
const CUT_DURING = new Set(['tool turn 2 first', 'tool turn 3 after tools', 'flush first']);

describeOnPostgres(
  'PostgreSQL away during each kind of model call',
  'the worker reaches the server through a TCP proxy the test cuts',
  () => {
    describe.each([
      { codec: 'payload encryption off', config: {} },
      { codec: 'payload encryption on', config: { encryptionKeys: `k1:${randomBytes(32).toString('base64')}` } },
    ])('$codec', ({ config }) => {
      const openBehindProxy = cuttablePostgresPerTest(url!);

      it('stores tool-call replies, final replies, the flush and the summary once the database is back, calling the model once for each', async () => {
        const { proxy, store } = await openBehindProxy();
        const toolRuns = new Map<number, number>();
        const tools = new ToolRegistry().register({
          name: 'lookup',
          description: 'Looks an order up by its number',
          input: z.object({ n: z.number() }),
          run: async ({ n }) => {
            toolRuns.set(n, (toolRuns.get(n) ?? 0) + 1);
            return `order ${n}: shipped`;
          },
        });
        try {
          await suite.withWorker(store, { tools, config }, async ({ client, fake }) => {
            const calls = new Map<string, number>();
            /** Each outage: what it cut, and whether Keel tried the database while it was away. */
            const outages: Array<{ during: string; refusedAtCut: number; struck?: boolean; restored: Promise<void> }> =
              [];
            let summarizerCut = false;
            const cutDuring = (during: string, kind: CallKind): void => {
              proxy.cut();
              const refusedAtCut = proxy.refused;
              const outage = { during, refusedAtCut, struck: false as boolean, restored: Promise.resolve() };
              // Away until a write was refused (the reply arrived, its write failed), then a while longer.
              outage.restored = waitUntil(
                `a refused write during ${during}`,
                async () => proxy.refused > refusedAtCut || undefined,
                60_000,
                20,
              )
                .then(() => new Promise((r) => setTimeout(r, HOLD_MS[kind])))
                .then(() => {
                  outage.struck = true;
                  proxy.restore();
                });
              outages.push(outage);
            };
            fake.respondWith((request): FakeStep => {
              const call = logicalCall(request);
              calls.set(call.name, (calls.get(call.name) ?? 0) + 1);
              const first = calls.get(call.name) === 1;
              if (first && (CUT_DURING.has(call.name) || (call.kind === 'summarizer' && !summarizerCut))) {
                summarizerCut ||= call.kind === 'summarizer';
                cutDuring(call.name, call.kind);
              }
              if (call.kind === 'summarizer') return goodSummarizer(request);
              if (call.kind === 'flush') return flushStep(request, 'the customer prefers email');
              const text = lastUserText(request);
              const n = Number(/tool turn (\d+)/.exec(text)?.[1] ?? 0);
              return endsWithToolResult(request)
                ? fakeReply.text(`re: ${text}`)
                : fakeReply.toolUse([{ id: `toolu_${n}`, name: 'lookup', input: { n } }]);
            });
            const agent = freshDurableAgent();
            const key = `agent:${agent}:main`;
            // Something to compact before the turns.
            await seedConversation(store.db, agent, key, 40);
            const replies: string[] = [];
            try {
              for (let i = 1; i <= TURNS; i++) replies.push((await client.sendMessage(key, `tool turn ${i}`)).reply);
              const compaction = await client.compact(key);
              expect(compaction.status).toBe('succeeded');
              await Promise.all(outages.map((o) => o.restored));
            } finally {
              proxy.restore();
            }

            expect(replies).toEqual(Array.from({ length: TURNS }, (_, i) => `re: tool turn ${i + 1}`));
            // Every outage struck a write after its model call, and no logical call reached the model twice.
            expect(outages.map((o) => [o.during.replace(/summarizer \w+/, 'summarizer'), o.struck])).toEqual([
              ['tool turn 2 first', true],
              ['tool turn 3 after tools', true],
              ['flush first', true],
              ['summarizer', true],
            ]);
            expect([...calls.entries()].filter(([, n]) => n !== 1)).toEqual([]);
            expect(calls.get('flush after tools')).toBe(1);
            expect([...calls.keys()].filter((name) => name.startsWith('summarizer')).length).toBeGreaterThanOrEqual(1);
            expect(Object.fromEntries(toolRuns)).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1 });

            // Stored once each: the turns' messages, the flush's audit entry, the compaction with the model's summary.
            const session = await getSession(store.db, agent, key);
            const rows = await allEntries(store.db, agent, session!.session_id);
            const texts = rows
              .filter((r) => r.type === 'message' && r.role === 'user')
              .map((r) => String((r.payload as unknown as MessageEntry).message.content));
            for (let i = 1; i <= TURNS; i++) expect(texts.filter((t) => t === `tool turn ${i}`)).toHaveLength(1);
            expect(rows.filter((r) => r.type === 'custom')).toHaveLength(1);
            const compactions = await store.db
              .selectFrom('compactions')
              .selectAll()
              .where('agent_id', '=', agent)
              .execute();
            expect(compactions.map((c) => [c.status, c.memory_flush, c.summarizer_model !== null])).toEqual([
              ['succeeded', 'ran (1 notes)', true],
            ]);
          });
        } finally {
          await store.close();
        }
      }, 300_000);

      it('stores the output of a tool that finished while the database was away: the tool runs once, the model reads its output', async () => {
        const { proxy, store } = await openBehindProxy();
        const runLog: string[] = [];
        let restored: Promise<void> = Promise.resolve();
        const tools = new ToolRegistry().register({
          name: 'slow_mark',
          description: 'Marks an order, slowly',
          input: z.object({ n: z.number() }),
          // The database goes away while the tool runs: its output arrives, its write cannot land.
          run: async ({ n }, ctx) => {
            runLog.push(ctx.idempotencyKey);
            proxy.cut();
            const refusedAtCut = proxy.refused;
            // Away longer than the three attempts the tool activity once had (about 3 s).
            restored = waitUntil('a refused write', async () => proxy.refused > refusedAtCut || undefined, 60_000, 20)
              .then(() => new Promise((r) => setTimeout(r, TOOL_OUTAGE_MS)))
              .then(() => proxy.restore());
            return `order ${n} marked (mark ${runLog.length})`;
          },
        });
        try {
          await suite.withWorker(store, { tools, config }, async ({ client, fake }) => {
            fake.respondWith((request): FakeStep =>
              endsWithToolResult(request)
                ? fakeReply.text('marked')
                : fakeReply.toolUse([{ id: 'toolu_mark', name: 'slow_mark', input: { n: 7 } }]),
            );
            const agent = freshDurableAgent();
            const key = `agent:${agent}:main`;
            const handle = client.temporal.workflow.getHandle(client.identify(key).workflowId);
            const first = fake.requests.length;
            const pending = client.sendMessage(key, 'mark order 7');
            pending.catch(() => undefined);
            try {
              // While the database is away, the output waits in its activity: sealed in the heartbeat
              // details with encryption on, only in the worker's memory with it off.
              const waiting = await waitUntil(
                'the tool activity waiting for the database',
                async () =>
                  proxy.refused > 0
                    ? (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'runTool')
                    : undefined,
                30_000,
              );
              const details = waiting.heartbeatDetails?.payloads ?? [];
              for (const payload of details)
                expect(Buffer.from(payload.data!).toString('latin1')).not.toContain('order 7 marked');
              if (config.encryptionKeys) expect(details.length).toBeGreaterThan(0);
              expect((await pending).reply).toBe('marked');
              await restored;
            } finally {
              proxy.restore();
            }

            expect(runLog).toHaveLength(1);
            const requests = fake.requests.slice(first);
            expect(requests).toHaveLength(2);
            expect(toolResultTexts(requests[1]!)).toEqual(['order 7 marked (mark 1)']);
            // No infrastructure error reached the model.
            expect(JSON.stringify(requests.map((r) => r.body.messages))).not.toMatch(
              /ECONN|127\.0\.0\.1|did not finish/,
            );
            const session = await getSession(store.db, agent, key);
            const results = (await allEntries(store.db, agent, session!.session_id)).filter(
              (r) => r.type === 'message' && r.role === 'toolResult',
            );
            expect(results).toHaveLength(1);
          });
        } finally {
          await store.close();
        }
      }, 120_000);
    });
  },
);

/** The tool results' texts a model request carries, in order. */
function toolResultTexts(request: FakeRequest): string[] {
  return (request.body.messages ?? [])
    .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: { type: string }) => b.type === 'tool_result')
    .map((b: { content: Array<{ text: string }> }) => b.content.map((c) => c.text).join(''));
}
