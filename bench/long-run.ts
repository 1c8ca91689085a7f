/**
 * One long agent run, at 100 and at 1,000 tool rounds: a turn that reads a report part per tool call
 * in a 32,000-token window (the fake Anthropic API enforces it), compacting as it goes and handing
 * itself on by continue-as-new. Per size: rounds per second, summarizer tokens per round, peak
 * context against the window, and Temporal history bytes per workflow run (mean and largest). The
 * point is that the per-round cost stays flat from 100 to 1,000 rounds: the ratios of the two.
 *
 *   npx ts-node --swc bench/long-run.ts      # BENCH_LONG_RUN_ROUNDS="100,1000"
 *
 * Prints one JSON object on stdout (people-text on stderr); `run()` returns the same object.
 */
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { openStore, type Store } from '../src/store/connect';
import { fakePromptTokens, startFakeAnthropic, type FakeAnthropic } from '../src/testing/fake-anthropic';
import { testDeps } from '../test/support/keel-deps';
import { isFlushRequest, isSummarizerRequest, routedResponder } from '../test/support/durable-turn-helpers';
import { reportReader, reportTask, reportTools } from '../test/support/report-parts';
import {
  keelClient,
  runInProcessWorker,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
} from '../test/support/temporal';
import { sessionWorkflowId } from '../src/sessions/session-key';
import { runMain } from './support/run-main';

const WINDOW = 32_000;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** One run's figures. */
export interface LongRunFigures {
  readonly rounds: number;
  readonly seconds: number;
  readonly roundsPerSecond: number;
  readonly compactions: number;
  readonly summarizerTokensPerRound: number;
  /** The largest prompt the model received (with its max_tokens), as a share of the window. */
  readonly peakContextShare: number;
  readonly workflowRuns: number;
  readonly historyBytesPerRun: number;
  readonly largestRunBytes: number;
  readonly largestRunEvents: number;
}

export interface LongRunResult {
  readonly window: number;
  readonly runs: readonly LongRunFigures[];
  /** Last size's per-round figures over the first's: ~1 is flat. */
  readonly secondsPerRoundRatio: number;
  readonly summarizerTokensPerRoundRatio: number;
  readonly largestRunBytesRatio: number;
}

async function oneRun(
  env: TemporalTestEnv,
  fake: FakeAnthropic,
  store: Store,
  rounds: number,
): Promise<LongRunFigures> {
  const taskQueue = uniqueTaskQueue('bench-long-run');
  const worker = await runInProcessWorker(
    env,
    taskQueue,
    testDeps(store, fake.url, {
      tools: reportTools(),
      config: { contextWindowTokens: WINDOW, reserveTokens: 4_000, reserveTokensFloor: 0 },
    }),
  );
  try {
    const agent = `bench${rounds}`;
    const key = `agent:${agent}:main`;
    const from = fake.requests.length;
    const started = performance.now();
    // The default step limit would stop a 1,000-part read just short: the run's budget fits the task.
    const result = await keelClient(env, taskQueue).sendMessage(key, reportTask(rounds), {
      budget: { maxModelCalls: rounds + 10 },
    });
    const seconds = (performance.now() - started) / 1000;
    if (result.reply !== `Done: all ${rounds} parts read.`) throw new Error(`the run did not finish: ${result.reply}`);
    const requests = fake.requests.slice(from);
    const summarizer = requests.filter(isSummarizerRequest);
    const billed = (u: Record<string, unknown> | undefined) =>
      Number(u?.input_tokens ?? 0) + Number(u?.output_tokens ?? 0) + Number(u?.cache_read_input_tokens ?? 0);
    const peak = Math.max(...requests.map((r) => fakePromptTokens(r.body) + (r.body.max_tokens ?? 0)));
    const histories = await runHistories(env, sessionWorkflowId(agent, key));
    const compactions = await store.db.selectFrom('compactions').select('id').where('agent_id', '=', agent).execute();
    const figures: LongRunFigures = {
      rounds,
      seconds: round(seconds),
      roundsPerSecond: round(rounds / seconds),
      compactions: compactions.length,
      summarizerTokensPerRound: round(summarizer.reduce((s, r) => s + billed(r.reportedUsage), 0) / rounds),
      peakContextShare: round(peak / WINDOW, 3),
      workflowRuns: histories.length,
      historyBytesPerRun: Math.round(histories.reduce((s, h) => s + h.bytes, 0) / histories.length),
      largestRunBytes: Math.max(...histories.map((h) => h.bytes)),
      largestRunEvents: Math.max(...histories.map((h) => h.events)),
    };
    log(
      `long-run ${rounds} rounds: ${figures.roundsPerSecond} rounds/s, ${figures.compactions} compactions, ${figures.summarizerTokensPerRound} summarizer tokens/round, peak ${figures.peakContextShare} of the window, ${figures.workflowRuns} runs of ${figures.historyBytesPerRun} history bytes (largest ${figures.largestRunBytes} B, ${figures.largestRunEvents} events); ${requests.filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r)).length} agent calls`,
    );
    return figures;
  } finally {
    await worker.stop();
  }
}

/** Every run of a workflow id: its history's events and protobuf bytes. */
async function runHistories(
  env: TemporalTestEnv,
  workflowId: string,
): Promise<Array<{ events: number; bytes: number }>> {
  const client = new Client({ connection: env.connection });
  const out: Array<{ events: number; bytes: number }> = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    out.push({
      events: history.events?.length ?? 0,
      bytes: temporal.api.history.v1.History.encode(history).finish().byteLength,
    });
  }
  return out;
}

function round(n: number, digits = 2): number {
  return Number(n.toFixed(digits));
}

export async function run(opts: { quick?: boolean } = {}): Promise<LongRunResult> {
  const sizes = (process.env.BENCH_LONG_RUN_ROUNDS ?? (opts.quick ? '50,200' : '100,1000')).split(',').map(Number);
  log(`long-run: one turn of ${sizes.join(' and ')} tool rounds in a ${WINDOW}-token window…`);
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic({ tokenLimit: WINDOW, countMaxTokens: true }),
    openStore({ kind: 'pglite', dataDir: 'memory://' }),
  ]);
  fake.respondWith(routedResponder(reportReader));
  try {
    const runs: LongRunFigures[] = [];
    for (const rounds of sizes) runs.push(await oneRun(env, fake, store, rounds));
    const [first, last] = [runs[0]!, runs[runs.length - 1]!];
    return {
      window: WINDOW,
      runs,
      secondsPerRoundRatio: round(first.roundsPerSecond / last.roundsPerSecond),
      summarizerTokensPerRoundRatio: round(last.summarizerTokensPerRound / Math.max(1, first.summarizerTokensPerRound)),
      largestRunBytesRatio: round(last.largestRunBytes / first.largestRunBytes),
    };
  } finally {
    fake.respondWith(undefined);
    await fake.close();
    await store.close();
    await env.close();
  }
}

export function ratioLines(r: LongRunResult): string[] {
  const [first, last] = [r.runs[0]!, r.runs[r.runs.length - 1]!];
  return [
    `seconds per round, ${last.rounds} rounds / ${first.rounds}: ${r.secondsPerRoundRatio}× (flat ≈ 1)`,
    `summarizer tokens per round, ${last.rounds} / ${first.rounds}: ${r.summarizerTokensPerRoundRatio}× (flat ≈ 1)`,
    `largest workflow run's history, ${last.rounds} / ${first.rounds}: ${r.largestRunBytesRatio}× (bounded ≈ 1); peak context ${last.peakContextShare} of the window`,
  ];
}

if (require.main === module) runMain('long-run', run, ratioLines);
