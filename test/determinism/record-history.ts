/**
 * Records the Temporal histories that test/determinism/determinism.test.ts replays, so a code or SDK change
 * that would break running sessions fails CI. One history per workflow path:
 * - turns with a tool call, a silent reply and a manual compaction; turns admitted by the awaitResult
 *   Update that carries them; a turn its sender cancelled while its model call was in flight;
 * - a tool call whose activity failed on every attempt, answered by the workflow;
 * - an overflow answered by a learned limit and a compaction (and that compaction's own history), also
 *   when the turn's first model call overflows;
 * - a flush failing in a 529 storm before a threshold compaction;
 * - a busy queue carried across continue-as-new; a session closing after its quiet period, and one
 *   whose quiet-period timer fired while it was busy; a run refused for KEEL_ALLOWED_AGENTS, closed at once;
 * - a parent that spawns two subagents and takes their announces, one subagent's own run, and a
 *   subagent steered mid-run that announces its task's and its steer's answers at once;
 * - an application's agent task (runAgentTask): one request with its prompt mode and tools, ending the run;
 * - a threshold compaction whose summary was asked on the last turn's prompt cache (its own history).
 *
 * Two places, one recorder (docs/patches.md says when each is written):
 *   npx ts-node --swc test/determinism/record-history.ts [scenario…]   # test/determinism/histories: today's shapes
 *   npm run record-release-histories                              # test/determinism/releases/<version>: a release's corpus, once
 * Today's histories are re-recorded on purpose, when a change is meant to change them; a release's
 * corpus is never re-recorded: the recorder refuses a release folder that already holds histories.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { openStore, type Store } from '../../src/store/connect';
import { ToolRegistry } from '../../src/tools/registry';
import { AGENT_TASK_WORKFLOW_TYPE, compactionWorkflowId } from '../../src/protocol';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';
import {
  keelClient,
  runInProcessWorker,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
} from '../support/temporal';
import { testDeps } from '../support/keel-deps';
import {
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  routedResponder,
  seedConversation,
  waitIdle,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { reportReader, reportTask, reportTools } from '../support/report-parts';
import { PARENT_PROMPT, isChildRequest, lookupTools, subagentResponder } from '../subagents/subagent-script';
import { createSessionSignals } from '../../src/client/session-signals';
import { steerSubagent } from '../../src/subagents/control';

/** Where this run writes: today's histories, or the release corpus of the package's version (`--release`). */
let outDir = join(__dirname, 'histories');

async function save(client: Client, workflowId: string, name: string, runId?: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const file = join(outDir, `${name}.binpb`);
  await writeFile(file, temporal.api.history.v1.History.encode(history).finish());
  process.stderr.write(`recorded ${history.events?.length} events → ${file}\n`);
}

/** The one tool the turn scenarios call: `lookup` answers `<word>: found`. */
function wordLookupTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'lookup',
    description: 'Looks a word up',
    input: z.object({ word: z.string() }),
    run: async ({ word }) => `${word}: found`,
  });
}

type Scenario = (ctx: { env: TemporalTestEnv; fake: FakeAnthropic; store: Store }) => Promise<void>;

/** A worker on a task queue of its own for one scenario, and a client with the scenario's tuning; the worker stops after. */
async function withWorker(
  { env, fake, store }: Parameters<Scenario>[0],
  opts: { deps?: Parameters<typeof testDeps>[2]; tuning?: Parameters<typeof keelClient>[2] },
  record: (client: ReturnType<typeof keelClient>, taskQueue: string) => Promise<void>,
): Promise<void> {
  const taskQueue = uniqueTaskQueue();
  const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url, opts.deps));
  try {
    await record(keelClient(env, taskQueue, opts.tuning), taskQueue);
  } finally {
    await worker.stop();
  }
}

/**
 * A 300-entry session whose next message overflows a provider limit of 12,000 tokens: the turn learns
 * the limit, compacts and answers; `record` saves what the scenario keeps of it.
 */
async function overflowOnSeededSession(
  ctx: Parameters<Scenario>[0],
  key: string,
  record: (client: ReturnType<typeof keelClient>, key: string) => Promise<void>,
): Promise<void> {
  const { fake, store } = ctx;
  await withWorker(ctx, {}, async (client) => {
    try {
      await seedConversation(store.db, 'replay', key, 300);
      fake.setTokenLimit(12_000);
      fake.respondWith((req) =>
        isSummarizerRequest(req) ? goodSummarizer(req) : fakeReply.text(`answered: ${lastUserText(req)}`),
      );
      await client.sendMessage(key, 'does this still fit?');
      await waitIdle(() => client.getStatus(key));
      await record(client, key);
    } finally {
      fake.setTokenLimit(200_000);
    }
  });
}

const scenarios: Record<string, Scenario> = {
  async turnsToolSilentCompact(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, { deps: { tools: wordLookupTools() } }, async (client) => {
      const key = 'agent:replay:main';
      fake.enqueue(
        fakeReply.text('hello'),
        fakeReply.toolUse([{ id: 'toolu_r1', name: 'lookup', input: { word: 'keel' } }]),
        fakeReply.text('keel: found'),
        fakeReply.text('NO_REPLY'),
      );
      await client.sendMessage(key, 'hi');
      await client.sendMessage(key, 'look up keel');
      await client.sendMessage(key, 'quiet please');
      fake.respondWith((req) =>
        isFlushRequest(req) ? fakeReply.text('NO_REPLY') : fakeReply.text('The user looked up keel; it was found.'),
      );
      await client.compact(key, { keepRecentTokens: 0 });
      await save(client.temporal, client.identify(key).workflowId, 'session-turns-tool-silent-compact');
    });
  },

  async toolActivityFailed(ctx) {
    const { fake } = ctx;
    // Details no JSON can hold: storing the result fails on every attempt, and the workflow answers the call.
    const tools = new ToolRegistry().register({
      name: 'count_rows',
      description: 'Counts rows',
      input: z.object({}),
      run: async () => ({ content: [{ type: 'text', text: 'many' }], details: { rows: 10n } }),
    });
    await withWorker(ctx, { deps: { tools } }, async (client) => {
      const key = 'agent:replay:toolfail';
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_c1', name: 'count_rows', input: {} }]),
        fakeReply.text('counting failed'),
      );
      await client.sendMessage(key, 'count the rows');
      await save(client.temporal, client.identify(key).workflowId, 'session-tool-activity-failed');
    });
  },

  async toolApprovals(ctx) {
    const { fake } = ctx;
    const tools = new ToolRegistry().register({
      name: 'wire_money',
      description: 'Wires money',
      input: z.object({ amount: z.number() }),
      approval: 'always',
      run: async ({ amount }) => `wired ${amount}`,
    });
    await withWorker(ctx, { deps: { tools } }, async (client) => {
      const key = 'agent:replay:approvals';
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_w1', name: 'wire_money', input: { amount: 10 } }]),
        fakeReply.text('wired'),
        fakeReply.toolUse([{ id: 'toolu_w2', name: 'wire_money', input: { amount: 99 } }]),
        fakeReply.text('not wired'),
      );
      // The approval path: one call approved (and decided twice), one denied.
      const decide = async (decision: 'approve' | 'deny') => {
        for (;;) {
          // The session may not be running yet: its first send starts it.
          const status = await client.getStatus(key).catch(() => undefined);
          const [pending] = status?.pendingApprovals ?? [];
          if (pending) {
            if (decision === 'deny') return client.deny(key, pending.approvalId, { by: 'replay', reason: 'no' });
            await client.approve(key, pending.approvalId, { by: 'replay' });
            return client.deny(key, pending.approvalId);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const first = client.sendMessage(key, 'wire 10');
      await decide('approve');
      await first;
      const second = client.sendMessage(key, 'wire 99');
      await decide('deny');
      await second;
      await save(client.temporal, client.identify(key).workflowId, 'session-tool-approvals');
    });
  },

  async turnCancelled(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, {}, async (client) => {
      const key = 'agent:replay:cancel';
      fake.enqueue({ ...fakeReply.text('too late'), delayMs: 600_000 }, fakeReply.text('after'));
      // The cancelRequest signal: the running turn's scope is cancelled with its model call in flight.
      const seen = fake.requests.length;
      const slow = client.sendMessage(key, 'slow', { requestId: 'replay-cancel' }).catch((err: unknown) => err);
      await fake.waitForRequests(seen + 1, 60_000);
      await client.cancelRequest(key, 'replay-cancel');
      await slow;
      await client.sendMessage(key, 'after');
      await save(client.temporal, client.identify(key).workflowId, 'session-turn-cancelled');
    });
  },

  async agentTask(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, { deps: { tools: wordLookupTools() } }, async (client, taskQueue) => {
      const key = 'agent:replay:task-1';
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_t1', name: 'lookup', input: { word: 'keel' } }]),
        fakeReply.text('keel: found'),
      );
      // An application's agent task (runAgentTask starts it as a child, of its own workflow type): one
      // request with its prompt mode and tools, then the run ends with the reply as its result.
      const { workflowId } = client.identify(key);
      await client.temporal.workflow.execute(AGENT_TASK_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [
          {
            agentId: 'replay',
            sessionKey: key,
            firstRequest: { requestId: 'task:replay-1', turn: { text: 'look up keel', streamReply: false } },
            task: { promptMode: 'minimal', tools: ['lookup'] },
          },
        ],
      });
      await save(client.temporal, workflowId, 'session-agent-task');
    });
  },

  async turnsAdmittedByUpdate(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, {}, async (client) => {
      const key = 'agent:replay:update';
      fake.enqueue(fakeReply.text('first'), fakeReply.text('second'));
      // Each request rides in its awaitResult Update-with-Start (the first one starts the session).
      await client.sendMessage(key, 'one');
      await client.sendMessage(key, 'two');
      await save(client.temporal, client.identify(key).workflowId, 'session-turns-admitted-by-update');
    });
  },

  async idleTimerAcrossTurns(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, { deps: { tools: wordLookupTools() }, tuning: { idleCloseMs: 2_000 } }, async (client) => {
      const key = 'agent:replay:begin';
      fake.enqueue(
        fakeReply.text('first'),
        fakeReply.toolUse([{ id: 'toolu_b1', name: 'lookup', input: { word: 'keel' } }]),
        fakeReply.text('keel: found'),
      );
      // The second turn comes a second later, so the one quiet-period timer fires while the session
      // was busy, starts again for what is left, and then closes the session.
      await client.sendMessage(key, 'one');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await client.sendMessage(key, 'look up keel');
      const { workflowId } = client.identify(key);
      await client.temporal.workflow.getHandle(workflowId).result();
      await save(client.temporal, workflowId, 'session-idle-timer-across-turns');
    });
  },

  async overflowAtStartTurn(ctx) {
    // startTurn's model call is refused as too long: the begin is read again, the session compacts, the call is made again.
    await overflowOnSeededSession(ctx, 'agent:replay:start-overflow', async (client, key) => {
      await save(client.temporal, client.identify(key).workflowId, 'session-overflow-at-start-turn');
    });
  },

  async overflowLearned(ctx) {
    await overflowOnSeededSession(ctx, 'agent:replay:overflow', async (client, key) => {
      await save(client.temporal, client.identify(key).workflowId, 'session-overflow-learned-window');
      await save(client.temporal, compactionWorkflowId('replay', key), 'compaction-within-learned-window');
    });
  },

  async flushFailsBeforeThresholdCompaction(ctx) {
    const { fake, store } = ctx;
    await withWorker(
      ctx,
      { deps: { config: { contextWindowTokens: 40_000 } }, tuning: { memoryFlushBudgetMs: 2_000 } },
      async (client) => {
        const key = 'agent:replay:flush';
        await seedConversation(store.db, 'replay', key, 300);
        fake.respondWith((req) =>
          isSummarizerRequest(req)
            ? goodSummarizer(req)
            : isFlushRequest(req)
              ? fakeReply.overloaded()
              : fakeReply.text('noted'),
        );
        await client.sendMessage(key, 'this turn crosses the compaction threshold');
        await waitIdle(() => client.getStatus(key));
        await save(client.temporal, client.identify(key).workflowId, 'session-flush-fails-threshold-compaction');
      },
    );
  },

  async summaryOnPromptCache(ctx) {
    const { fake, store } = ctx;
    // The seeded history plus the prompt stays under the threshold; the long answer carries the context over it.
    // A model of its own: the learned limit an overflow scenario taught another model does not apply here.
    const key = 'agent:replay:cached-summary';
    const { sessionId } = await seedConversation(store.db, 'replay', key, 200);
    const seeded = (
      await store.db
        .selectFrom('transcript_entries')
        .select((eb) => eb.fn.sum<number>('token_estimate').as('t'))
        .where('session_id', '=', sessionId)
        .executeTakeFirstOrThrow()
    ).t;
    await withWorker(
      ctx,
      { deps: { config: { model: 'replay-cached-summary-model', contextWindowTokens: Number(seeded) + 26_000 } } },
      async (client) => {
        const answer = `The walkthrough. ${'The deployment uses host build-7.example.net and config /etc/keel/app.toml. '.repeat(320)}`;
        fake.respondWith((req) =>
          isSummarizerRequest(req)
            ? goodSummarizer(req)
            : isFlushRequest(req)
              ? fakeReply.text('NO_REPLY')
              : fakeReply.text(lastUserText(req).startsWith('walk') ? answer : 'noted'),
        );
        await client.sendMessage(key, 'hello again');
        await client.sendMessage(key, 'walk me through the deployment');
        await waitIdle(() => client.getStatus(key));
        await save(client.temporal, compactionWorkflowId('replay', key), 'compaction-summary-on-prompt-cache');
      },
    );
  },

  async queueAcrossContinueAsNew(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, { tuning: { maxTurnsPerRun: 2 } }, async (client) => {
      const key = 'agent:replay:queue';
      fake.respondWith((req) => fakeReply.text(`re: ${lastUserText(req)}`, { delayMs: 100 }));
      await Promise.all(['one', 'two', 'three', 'four', 'five'].map((t) => client.sendMessage(key, t)));
      const { workflowId } = client.identify(key);
      const runs: string[] = [];
      for await (const e of client.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
        runs.push(e.runId);
      // The oldest run: it ended by continue-as-new with requests still queued.
      await save(client.temporal, workflowId, 'session-queue-continue-as-new', runs[runs.length - 1]);
    });
  },

  async longTurnHandedOn(ctx) {
    const { fake } = ctx;
    // A 40-round turn in a 12,000-token window: it compacts inside the turn and hands itself on
    // every 15 rounds; the first run (mid-turn) and the last (the turn's end) are both kept.
    await withWorker(
      ctx,
      {
        deps: {
          tools: reportTools([], 6),
          config: { contextWindowTokens: 12_000, reserveTokens: 2_000, reserveTokensFloor: 0 },
        },
        tuning: { maxRoundsPerRun: 15 },
      },
      async (client) => {
        const key = 'agent:replay:long';
        fake.respondWith(routedResponder(reportReader));
        await client.sendMessage(key, reportTask(40));
        // A second turn that stops at its budget: the last call without tools, and its report.
        await client.sendMessage(key, reportTask(40).replace('quarterly', 'annual'), { budget: { maxModelCalls: 4 } });
        const { workflowId } = client.identify(key);
        const runs: string[] = [];
        for await (const e of client.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
          runs.push(e.runId);
        await save(client.temporal, workflowId, 'session-long-turn-handed-on', runs[runs.length - 1]);
        await save(client.temporal, workflowId, 'session-long-turn-budget-stop', runs[0]);
      },
    );
  },

  async idleClose(ctx) {
    const { fake } = ctx;
    await withWorker(ctx, { tuning: { idleCloseMs: 1_000 } }, async (client) => {
      const key = 'agent:replay:idle';
      fake.respondWith(() => fakeReply.text('bye for now'));
      await client.sendMessage(key, 'hello');
      const { workflowId } = client.identify(key);
      await client.temporal.workflow.getHandle(workflowId).result();
      await save(client.temporal, workflowId, 'session-idle-close');
    });
  },

  async parentWithSubagents(ctx) {
    const { fake, store } = ctx;
    await withWorker(ctx, { deps: { tools: lookupTools() }, tuning: { idleCloseMs: 1_500 } }, async (client) => {
      const key = 'agent:replay:parent';
      fake.respondWith(subagentResponder({ cities: ['Oslo', 'Lima'] }));
      await client.sendMessage(key, PARENT_PROMPT);
      const { workflowId } = client.identify(key);
      // The parent takes both announces, answers them, then closes idle: its whole history is closed.
      await client.temporal.workflow.getHandle(workflowId).result();
      const [child] = await store.db.selectFrom('subagent_runs').select('workflow_id').execute();
      await save(client.temporal, workflowId, 'session-parent-with-subagents');
      await save(client.temporal, child!.workflow_id!, 'session-subagent-run');
    });
  },

  async refusedAgentCloses(ctx) {
    await withWorker(ctx, { deps: { config: { allowedAgents: ['replay'] } } }, async (client) => {
      const key = 'agent:stranger:main';
      // Refused for KEEL_ALLOWED_AGENTS: the run closes at once.
      await client.sendMessage(key, 'let me in').catch(() => undefined);
      const { workflowId } = client.identify(key);
      await client.temporal.workflow.getHandle(workflowId).result();
      await save(client.temporal, workflowId, 'session-refused-agent-closes');
    });
  },

  async subagentSteeredMidRun(ctx) {
    const { env, fake, store } = ctx;
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url, { tools: lookupTools() }));
    try {
      const client = keelClient(env, taskQueue, { idleCloseMs: 1_500 });
      const key = 'agent:replay:steering-parent';
      // The child's last model call waits for the steer: the steer lands mid-run, and one announce carries both answers.
      let release!: () => void;
      const steered = new Promise<void>((resolve) => (release = resolve));
      const base = subagentResponder({ cities: ['Oslo'] });
      fake.respondWith(async (r) => {
        const messages = r.body.messages ?? [];
        if (isChildRequest(r) && messages.length === 3) await steered;
        return base(r);
      });
      await client.sendMessage(key, PARENT_PROMPT);
      const run = await store.db
        .selectFrom('subagent_runs')
        .selectAll()
        .where('parent_session_key', '=', key)
        .executeTakeFirstOrThrow();
      const signals = createSessionSignals(client.temporal.connection, client.temporal.options.namespace, taskQueue);
      await steerSubagent(store.db, signals, run, 'steer: and Bergen?', 'steer:replay:1');
      release();
      await client.temporal.workflow.getHandle(run.workflow_id!).result();
      await save(client.temporal, run.workflow_id!, 'session-subagent-steered-mid-run');
      await client.temporal.workflow.getHandle(client.identify(key).workflowId).result();
    } finally {
      await worker.stop();
    }
  },
};

/**
 * `--release`: the release corpus of the package's version, in a folder of its own that must not
 * hold histories yet (a release's corpus is recorded once, by that release's code).
 */
async function chooseOutDir(args: string[]): Promise<string[]> {
  if (!args.includes('--release')) return args;
  const { version } = z
    .object({ version: z.string().min(1) })
    .parse(JSON.parse(await readFile(join(__dirname, '..', '..', 'package.json'), 'utf8')));
  outDir = join(__dirname, 'releases', version);
  await mkdir(outDir, { recursive: true });
  const recorded = (await readdir(outDir)).filter((f) => f.endsWith('.binpb'));
  if (recorded.length > 0)
    throw new Error(
      `${outDir} already holds ${recorded.length} histories: a release's corpus is recorded once; bump the package version for a new release`,
    );
  return args.filter((a) => a !== '--release');
}

async function main(): Promise<void> {
  const only = await chooseOutDir(process.argv.slice(2));
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic(),
    openStore({ kind: 'pglite', dataDir: 'memory://' }),
  ]);
  try {
    // Names on the command line record only those scenarios (the others keep their older histories).
    for (const [name, run] of Object.entries(scenarios)) {
      if (only.length > 0 && !only.includes(name)) continue;
      process.stderr.write(`scenario ${name}\n`);
      await run({ env, fake, store });
      fake.respondWith(undefined);
    }
    if (outDir.includes(`${join('determinism', 'releases')}`))
      process.stderr.write(
        `${outDir}: commit it, tag that commit v<version>, and list it in test/determinism/README.md\n`,
      );
  } finally {
    await store.close();
    await fake.close();
    await env.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
