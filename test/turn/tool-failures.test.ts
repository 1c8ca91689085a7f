/**
 * A tool's failures are the model's to handle, on the real path (client → Temporal → worker → real
 * SDK → fake API, PostgreSQL/PGlite): a thrown error, a retryable error and a timeout each end as an
 * error result the model's next request carries; the turn goes on, the transcript stays paired, and
 * a hung tool does not hold its session past its timeout (the tool's own, or its agent's).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { keelClient, runInProcessWorker, uniqueTaskQueue } from '../support/temporal';
import { allEntries } from '../support/store-readers';
import { RetryableToolError } from '../../src/tools/tool-errors';
import { ToolRegistry } from '../../src/tools/registry';
import { getSession } from '../../src/store/sessions-repo';
import { runDoctor } from '../../src/operations/doctor/doctor';
import { loadKeelSettings } from '../../src/config/agent-config';
import { openRuntime } from '../../src/runtime/activity-deps';
import type { Store } from '../../src/store/connect';
import type { AgentMessage } from '../../src/context/types';

const suite = integrationSuite();

const freshKey = (): { agent: string; key: string } => {
  const agent = `t${Math.random().toString(36).slice(2, 9)}`;
  return { agent, key: `agent:${agent}:main` };
};

/** The tool_result blocks a model request carries, as the API receives them (is_error absent counts as false). */
function toolResults(request: FakeRequest): Array<{ tool_use_id: string; is_error: boolean; text: string }> {
  return (request.body.messages ?? [])
    .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: { type: string }) => b.type === 'tool_result')
    .map((b: { tool_use_id: string; is_error?: boolean; content: Array<{ text: string }> }) => ({
      tool_use_id: b.tool_use_id,
      is_error: b.is_error === true,
      text: b.content.map((c) => c.text).join(''),
    }));
}

/** The roles of the session's stored messages, and what `keel doctor` finds wrong with its tool pairing. */
async function transcript(
  store: Store,
  agent: string,
  key: string,
): Promise<{ roles: string[]; pairingFindings: string[] }> {
  const session = await getSession(store.db, agent, key);
  const roles = (await allEntries(store.db, agent, session!.session_id)).map(
    (e) => (e.payload as { message?: AgentMessage }).message?.role ?? e.type,
  );
  const report = await runDoctor(store.db, {
    fix: false,
    agentId: agent,
    stuckAfterMinutes: 60,
    now: new Date(),
    workflows: { skipped: 'not asked in this test' },
  });
  return { roles, pairingFindings: report.findings.filter((f) => f.check === 'tool-pairing').map((f) => f.detail) };
}

describe.each(testDatabases())('tool failures reach the model, on $name', (database) => {
  const db = suite.storePerTest(database);

  it('answers a thrown error with an error result the model reads, after one run, and the turn goes on', async () => {
    let runs = 0;
    const tools = new ToolRegistry().register({
      name: 'close_account',
      description: 'Closes an account',
      input: z.object({ account: z.string() }),
      run: async () => {
        runs++;
        throw new Error('no such account');
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_close', name: 'close_account', input: { account: 'ACME-7' } }]),
        fakeReply.text('There is no account ACME-7.'),
      );
      const result = await client.sendMessage(key, 'close ACME-7');

      expect([result.reply, result.modelCalls, runs]).toEqual(['There is no account ACME-7.', 2, 1]);
      // The turn's result names why the call failed, for a chat that did not see the stream.
      expect(result.toolCalls).toEqual([
        {
          id: 'toolu_close',
          name: 'close_account',
          isError: true,
          error: 'tool "close_account" failed: no such account',
        },
      ]);
      expect(toolResults(fake.requests[first + 1]!)).toEqual([
        { tool_use_id: 'toolu_close', is_error: true, text: 'tool "close_account" failed: no such account' },
      ]);
      expect(await transcript(store, agent, key)).toEqual({
        roles: ['user', 'assistant', 'toolResult', 'assistant'],
        pairingFindings: [],
      });
    });
  });

  it('runs a tool that throws RetryableToolError again with one idempotency key until it answers; the model sees the answer', async () => {
    const keys: string[] = [];
    const tools = new ToolRegistry().register({
      name: 'ledger_balance',
      description: 'Reads a balance',
      input: z.object({}),
      run: async (_input, ctx) => {
        keys.push(ctx.idempotencyKey);
        if (keys.length < 3) throw new RetryableToolError('the ledger is busy');
        return 'balance: 12 EUR';
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_bal', name: 'ledger_balance', input: {} }]),
        fakeReply.text('You have 12 EUR.'),
      );
      expect((await client.sendMessage(key, 'balance?')).reply).toBe('You have 12 EUR.');

      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/\/toolu_bal$/);
      expect(toolResults(fake.requests[first + 1]!)).toEqual([
        { tool_use_id: 'toolu_bal', is_error: false, text: 'balance: 12 EUR' },
      ]);
      // The retries happened inside the one tool step: the model was called once before it and once after.
      expect(fake.requests.length - first).toBe(2);
      expect((await transcript(store, agent, key)).pairingFindings).toEqual([]);
    });
  });

  it('hands the last error to the model when a tool with a retry policy fails on every attempt', async () => {
    let runs = 0;
    const tools = new ToolRegistry().register({
      name: 'sync_calendar',
      description: 'Syncs the calendar',
      input: z.object({}),
      retry: { maxAttempts: 2, initialIntervalMs: 50 },
      run: async () => {
        runs++;
        throw new Error(`calendar server answered 502 (run ${runs})`);
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, fake }) => {
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_sync', name: 'sync_calendar', input: {} }]),
        fakeReply.text('The calendar server is down.'),
      );
      expect((await client.sendMessage(freshKey().key, 'sync my calendar')).reply).toBe('The calendar server is down.');
      expect(runs).toBe(2);
      expect(toolResults(fake.requests[first + 1]!)).toEqual([
        {
          tool_use_id: 'toolu_sync',
          is_error: true,
          text: 'tool "sync_calendar" failed after 2 attempts: calendar server answered 502 (run 2)',
        },
      ]);
    });
  });

  it('abandons a tool hanging past its timeout with an error result and its signal aborted; the session answers its next message', async () => {
    let signal: AbortSignal | undefined;
    const tools = new ToolRegistry().register({
      name: 'fetch_report',
      description: 'Fetches a report',
      input: z.object({}),
      timeoutMs: 500,
      // Ignores its signal: only the deadline can end it.
      run: (_input, ctx) => {
        signal = ctx.signal;
        return new Promise(() => undefined);
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_rep', name: 'fetch_report', input: {} }]),
        fakeReply.text('The report service did not answer.'),
      );
      expect((await client.sendMessage(key, 'get the report')).reply).toBe('The report service did not answer.');
      expect(toolResults(fake.requests[first + 1]!)).toEqual([
        {
          tool_use_id: 'toolu_rep',
          is_error: true,
          text: 'tool "fetch_report" timed out after 0.5 s and was abandoned; its signal was aborted',
        },
      ]);
      expect(signal?.aborted).toBe(true);

      fake.enqueue(fakeReply.text('Still here.'));
      expect((await client.sendMessage(key, 'are you there?')).reply).toBe('Still here.');
      expect(await transcript(store, agent, key)).toEqual({
        roles: ['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant'],
        pairingFindings: [],
      });
    });
  });
  it('answers a call whose output cannot be stored with an error result naming why, running the tool once', async () => {
    let runs = 0;
    const tools = new ToolRegistry().register({
      name: 'count_rows',
      description: 'Counts rows',
      input: z.object({}),
      // Details no JSON can hold: the tool's fault, which no retry of its activity would mend.
      run: async () => {
        runs++;
        return { content: [{ type: 'text', text: 'many rows' }], details: { rows: 10n } };
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_count', name: 'count_rows', input: {} }]),
        fakeReply.text('Counting failed.'),
      );
      expect((await client.sendMessage(key, 'count the rows')).reply).toBe('Counting failed.');

      const [result] = toolResults(fake.requests[first + 1]!);
      expect(result).toMatchObject({ tool_use_id: 'toolu_count', is_error: true });
      expect(result!.text).toMatch(/^tool "count_rows" returned a result that cannot be stored: .*BigInt/);
      expect(runs).toBe(1);
      expect(await transcript(store, agent, key)).toEqual({
        roles: ['user', 'assistant', 'toolResult', 'assistant'],
        pairingFindings: [],
      });
    });
  });
});

describe.each(testDatabases())('tool timeouts per agent (keel.config.json), on $name', (database) => {
  const db = suite.storePerTest(database);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-tool-timeouts-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("times a tool out at its agent's toolTimeout, while an agent without one lets it finish", async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const [hasty, patient] = [`hasty-${tag}`, `patient-${tag}`];
    const tools = new ToolRegistry().register({
      name: 'slow_lookup',
      description: 'Looks something up slowly',
      input: z.object({}),
      run: async (_input, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return ctx.signal.aborted ? 'finished after its signal was aborted' : 'found it';
      },
    });
    await writeFile(
      join(dir, 'keel.config.json'),
      JSON.stringify({ reset: { mode: 'none' }, agents: { [hasty]: { toolTimeout: '300ms' }, [patient]: {} } }),
    );
    const settings = loadKeelSettings({
      env: {
        KEEL_CONFIG: join(dir, 'keel.config.json'),
        ANTHROPIC_BASE_URL: suite.fake.url,
        ANTHROPIC_API_KEY: 'test-key',
      },
      cwd: dir,
    });
    expect(settings.agents.get(hasty)!.toolTimeoutMs).toBe(300);
    const runtime = await openRuntime({ config: settings.defaults, agents: settings.agents, store: db.store, tools });
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(suite.env, taskQueue, runtime.deps);
    try {
      const client = keelClient(suite.env, taskQueue);
      const fake = suite.fake;
      const resultFor = async (agent: string, id: string): Promise<ReturnType<typeof toolResults>> => {
        const first = fake.requests.length;
        fake.enqueue(fakeReply.toolUse([{ id, name: 'slow_lookup', input: {} }]), fakeReply.text('done'));
        expect((await client.sendMessage(`agent:${agent}:main`, 'look it up')).reply).toBe('done');
        return toolResults(fake.requests[first + 1]!);
      };
      expect(await resultFor(hasty, 'toolu_hasty')).toEqual([
        {
          tool_use_id: 'toolu_hasty',
          is_error: true,
          text: 'tool "slow_lookup" timed out after 0.3 s and was abandoned; its signal was aborted',
        },
      ]);
      expect(await resultFor(patient, 'toolu_patient')).toEqual([
        { tool_use_id: 'toolu_patient', is_error: false, text: 'found it' },
      ]);
    } finally {
      await worker.stop();
      await runtime.close();
    }
  });
});
