import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { keelSinks } from '../../workers/keel-sinks';
import { keelWorkflowBundle } from '../support/workflow-bundle';
import * as patches from '../../workflows/patches';

/** Patch ids whose old branch a release in the corpus still needs. */
const LIVE_PATCHES: readonly string[] = Object.values(patches);

/** Today's histories (test/determinism/histories), recorded by the current code. */
const TODAY = join(__dirname, 'histories');
/** Every release's corpus (test/determinism/releases/<version>), recorded once by that release's code. */
const RELEASES = join(__dirname, 'releases');

type History = temporal.api.history.v1.IHistory;
type Marker = NonNullable<temporal.api.history.v1.IHistoryEvent['markerRecordedEventAttributes']>;

async function readHistory(dir: string, file: string): Promise<History> {
  return temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
}

async function historyFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.binpb')).sort();
}

/** The histories to replay: today's, and every release's, named by where they come from. */
async function everyHistory(): Promise<Array<{ name: string; dir: string; file: string }>> {
  const today = (await historyFiles(TODAY)).map((file) => ({ name: file, dir: TODAY, file }));
  const releases = (await readdir(RELEASES)).sort();
  const released = await Promise.all(
    releases.map(async (version) =>
      (await historyFiles(join(RELEASES, version))).map((file) => ({
        name: `${version}/${file}`,
        dir: join(RELEASES, version),
        file,
      })),
    ),
  );
  return [...today, ...released.flat()];
}

/** The text a marker carries (a local activity's result, or a patch id). */
function markerText(m: Marker): string {
  return Buffer.from(
    m.details?.data?.payloads?.[0]?.data ?? m.details?.['patch-data']?.payloads?.[0]?.data ?? [],
  ).toString('utf8');
}

function markersOf(history: History): Marker[] {
  return (history.events ?? []).flatMap((e) =>
    e.markerRecordedEventAttributes ? [e.markerRecordedEventAttributes] : [],
  );
}

/** Local-activity steps of a history by activity name. */
function localSteps(history: History, name: string): number {
  return markersOf(history).filter((m) => m.markerName === 'core_local_activity' && markerText(m).includes(`"${name}"`))
    .length;
}

function scheduled(history: History, activity: string): number {
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity)
    .length;
}

/** The workflow type a history ran as. */
function workflowType(history: History): string | null | undefined {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
}

/** The workflow types a history started as children, in order. */
function childTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const type = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name;
    return type ? [type] : [];
  });
}

/**
 * Replays recorded session histories against today's workflow code: a change that would make
 * running sessions non-deterministic (reordered activities, new commands) fails here, before it
 * ships. Every release's corpus is replayed too: such a change needs a patch (docs/patches.md).
 */
describe('saved session histories replay against the current workflow code', () => {
  it('replays every history of today and of every release without a non-determinism error', async () => {
    // Errors only: a workflow's call to a sink the replayer lacks would show here.
    const errors: string[] = [];
    const logger = new DefaultLogger('ERROR', ({ level, message }) => errors.push(`${level} ${message}`));
    Runtime.install({ logger });
    const histories = await everyHistory();
    expect(histories.filter((h) => h.dir === TODAY).length).toBeGreaterThan(0);
    expect(histories.some((h) => h.name.startsWith('0.1.0/'))).toBe(true);
    // 0.2.0 has the approval path, and subagents and agent tasks of their own workflow types.
    expect(histories.some((h) => h.name === '0.2.0/session-tool-approvals.binpb')).toBe(true);
    const workflowBundle = await keelWorkflowBundle();
    for (const { name, dir, file } of histories) {
      // The worker's sinks, as a real worker has them (they are not called on replay).
      await expect(
        Worker.runReplayHistory(
          { workflowBundle, sinks: keelSinks(logger, undefined) },
          await readHistory(dir, file),
          name,
        ),
      ).resolves.toBeUndefined();
    }
    expect(errors).toEqual([]);
  });

  it('hold one turn shape: begun and first called in startTurn, finished by its last model call, no patch markers but the live ones', async () => {
    for (const file of await historyFiles(TODAY)) {
      const history = await readHistory(TODAY, file);
      expect({
        file,
        patches: markersOf(history)
          .filter((m) => m.markerName === 'core_patch')
          .map(markerText)
          .filter((text) => !LIVE_PATCHES.some((id) => text.includes(id))),
      }).toEqual({ file, patches: [] });
    }
    // A parent starts its subagents as subagentWorkflow, behind the patch that keeps 0.1.0's parents replaying.
    const parent = await readHistory(TODAY, 'session-parent-with-subagents.binpb');
    expect(
      markersOf(parent)
        .map(markerText)
        .filter((t) => t.includes(patches.SUBAGENT_OWN_WORKFLOW_TYPE)),
    ).toHaveLength(1);
    expect(childTypes(parent)).toEqual(['subagentWorkflow', 'subagentWorkflow']);
    // Two turns: each begins in its startTurn activity; neither has a beginTurn or finishTurn step.
    const update = await readHistory(TODAY, 'session-turns-admitted-by-update.binpb');
    expect({
      startTurns: scheduled(update, 'startTurn'),
      beginTurnSteps: localSteps(update, 'beginTurn'),
      finishTurnSteps: localSteps(update, 'finishTurn'),
    }).toEqual({
      startTurns: 2,
      beginTurnSteps: 0,
      finishTurnSteps: 0,
    });
    // The second turn's tool call, then its final reply from callModel.
    const tool = await readHistory(TODAY, 'session-turns-tool-silent-compact.binpb');
    expect({
      startTurns: scheduled(tool, 'startTurn'),
      callModels: scheduled(tool, 'callModel'),
      runTools: scheduled(tool, 'runTool'),
    }).toEqual({ startTurns: 3, callModels: 1, runTools: 1 });
    // startTurn's call overflowed: its failure carries the begin's result, and the session compacts. In
    // 0.1.0's history it did not, and the begin is read again (one beginTurn step): both replay.
    const overflowed = 'session-overflow-at-start-turn.binpb';
    expect(localSteps(await readHistory(TODAY, overflowed), 'beginTurn')).toBe(0);
    expect(localSteps(await readHistory(join(RELEASES, '0.1.0'), overflowed), 'beginTurn')).toBe(1);
    expect(scheduled(await readHistory(TODAY, overflowed), 'callModel')).toBeGreaterThan(0);
  });

  it('hold the approval path: opened and settled by local steps, decided by Update, the approved call run once', async () => {
    const history = await readHistory(TODAY, 'session-tool-approvals.binpb');
    const updates = (history.events ?? []).filter(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'decideApproval',
    );
    expect({
      openApproval: localSteps(history, 'openApproval'),
      settleApproval: localSteps(history, 'settleApproval'),
      decisions: updates.length,
      runTools: scheduled(history, 'runTool'),
    }).toEqual({ openApproval: 2, settleApproval: 2, decisions: 3, runTools: 1 });
  });

  it('holds a quiet-period timer that fired while the session was busy: started again, never cancelled, then the close', async () => {
    const events = (await readHistory(TODAY, 'session-idle-timer-across-turns.binpb')).events ?? [];
    expect(events.filter((e) => e.timerCanceledEventAttributes)).toEqual([]);
    expect(events.filter((e) => e.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
  });

  it('holds a tool activity that failed on every attempt, answered by the workflow with a storeToolFailure step', async () => {
    const failed = await readHistory(TODAY, 'session-tool-activity-failed.binpb');
    expect(localSteps(failed, 'storeToolFailure')).toBe(1);
    // History keeps the last of its three attempts.
    expect(
      (failed.events ?? []).flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
      ),
    ).toContain(3);
    expect((failed.events ?? []).filter((e) => e.activityTaskFailedEventAttributes)).toHaveLength(1);
  });

  it('holds a run refused for KEEL_ALLOWED_AGENTS that closed at once, without an idle timer', async () => {
    const events = (await readHistory(TODAY, 'session-refused-agent-closes.binpb')).events ?? [];
    expect(events.filter((e) => e.timerFiredEventAttributes)).toEqual([]);
    expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
  });

  it('hold subagent runs that announce once: a steered run announces both answers in one, a plain run its task', async () => {
    const announces = async (file: string) => {
      const events = (await readHistory(TODAY, file)).events ?? [];
      const steers = events.filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'steer',
      ).length;
      const calls = events
        .map((e) => e.activityTaskScheduledEventAttributes)
        .filter((a) => a?.activityType?.name === 'announceToParent');
      const answers = calls.map((a) =>
        (
          JSON.parse(Buffer.from(a!.input?.payloads?.[0]?.data ?? []).toString('utf8')) as {
            answers: Array<{ key: string }>;
          }
        ).answers.map((x) => x.key.split(':')[0]),
      );
      return { steers, answers };
    };
    expect(await announces('session-subagent-steered-mid-run.binpb')).toEqual({
      steers: 1,
      answers: [['task', 'steer']],
    });
    expect(await announces('session-subagent-run.binpb')).toEqual({ steers: 0, answers: [['task']] });
    // Today's subagents run as subagentWorkflow (as 0.2.0's); 0.1.0's ran as sessionWorkflow, which still serves them (replayed above).
    expect(workflowType(await readHistory(TODAY, 'session-subagent-run.binpb'))).toBe('subagentWorkflow');
    expect(workflowType(await readHistory(join(RELEASES, '0.2.0'), 'session-subagent-run.binpb'))).toBe(
      'subagentWorkflow',
    );
    expect(workflowType(await readHistory(join(RELEASES, '0.1.0'), 'session-subagent-run.binpb'))).toBe(
      'sessionWorkflow',
    );
  });

  it('hold a turn its sender cancelled: the signal, the model call asked to cancel, then the next turn', async () => {
    const events = (await readHistory(TODAY, 'session-turn-cancelled.binpb')).events ?? [];
    expect(
      events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'cancelRequest'),
    ).toHaveLength(1);
    expect(events.filter((e) => e.activityTaskCancelRequestedEventAttributes)).toHaveLength(1);
    expect(scheduled({ events }, 'startTurn')).toBe(2);
  });

  it('hold an agent task: one request with its prompt mode and tools, then the run completes with the reply as its result', async () => {
    const events = (await readHistory(TODAY, 'session-agent-task.binpb')).events ?? [];
    expect(workflowType({ events })).toBe('agentTaskWorkflow');
    expect(workflowType(await readHistory(join(RELEASES, '0.2.0'), 'session-agent-task.binpb'))).toBe(
      'agentTaskWorkflow',
    );
    expect(workflowType(await readHistory(join(RELEASES, '0.1.0'), 'session-agent-task.binpb'))).toBe(
      'sessionWorkflow',
    );
    const input = JSON.parse(
      Buffer.from(events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!.data!).toString('utf8'),
    );
    expect(input.task).toEqual({ promptMode: 'minimal', tools: ['lookup'] });
    expect(events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean)).toEqual([
      'startTurn',
      'runTool',
      'callModel',
    ]);
    const completed = events.at(-1)!.workflowExecutionCompletedEventAttributes!;
    expect(JSON.parse(Buffer.from(completed.result!.payloads![0]!.data!).toString('utf8'))).toMatchObject({
      reply: 'keel: found',
      sessionKey: 'agent:replay:task-1',
      modelCalls: 2,
    });
  });

  it('hold a threshold compaction summarized on the prompt cache: one call on the cache instead of the chunks', async () => {
    const onCache = await readHistory(TODAY, 'compaction-summary-on-prompt-cache.binpb');
    expect({ onCache: scheduled(onCache, 'summarizeOnCache'), chunks: scheduled(onCache, 'summarizeChunk') }).toEqual({
      onCache: 1,
      chunks: 0,
    });
  });
});
