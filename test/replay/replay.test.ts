import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { keelSinks } from '../../workers/keel-sinks';
import { keelWorkflowBundle } from '../support/workflow-bundle';
import { BEGIN_IN_MODEL_CALL, FINISH_IN_MODEL_CALL, TOOL_FAILURE_RESULT } from '../../workflows/session-steps';
import { IDLE_TIMER_ACROSS_TURNS } from '../../workflows/idle-timer';
import { REFUSED_AGENT_CLOSES } from '../../workflows/session';
import { SUBAGENT_ONE_ANNOUNCE_PER_RUN } from '../../workflows/session';
import { SUMMARY_ON_PROMPT_CACHE } from '../../workflows/compaction';

/**
 * Replays recorded session histories against today's workflow code: a change that would make
 * running sessions non-deterministic (reordered activities, new commands) fails here, before it ships.
 */
describe('saved session histories replay against the current workflow code', () => {
  it('replays every recorded history without a non-determinism error', async () => {
    // Errors only: a workflow's call to a sink the replayer lacks would show here.
    const errors: string[] = [];
    const logger = new DefaultLogger('ERROR', ({ level, message }) => errors.push(`${level} ${message}`));
    Runtime.install({ logger });
    const dir = join(__dirname, 'histories');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.binpb'));
    expect(files.length).toBeGreaterThan(0);
    const workflowBundle = await keelWorkflowBundle();
    for (const file of files) {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      // The worker's sinks, as a real worker has them (they are not called on replay).
      await expect(Worker.runReplayHistory({ workflowBundle, sinks: keelSinks(logger, undefined) }, history, file)).resolves.toBeUndefined();
    }
    expect(errors).toEqual([]);
  });

  it('hold every shape of a turn: finishTurn and beginTurn steps (before the patches), finished in the last model call, begun in the first, a failed tool activity answered', async () => {
    const dir = join(__dirname, 'histories');
    const shape = async (file: string) => {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      const events = history.events ?? [];
      const markers = events.map((e) => e.markerRecordedEventAttributes).filter((m) => m != null);
      const payload = (m: (typeof markers)[number]) => Buffer.from(m!.details?.data?.payloads?.[0]?.data ?? m!.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8');
      const patches = markers.filter((m) => m!.markerName === 'core_patch').map(payload);
      const steps = (name: string) => markers.filter((m) => m!.markerName === 'core_local_activity' && payload(m).includes(`"${name}"`)).length;
      return {
        patches: [FINISH_IN_MODEL_CALL, BEGIN_IN_MODEL_CALL, IDLE_TIMER_ACROSS_TURNS].filter((id) => patches.some((p) => p.includes(id))),
        finishTurnSteps: steps('finishTurn'),
        beginTurnSteps: steps('beginTurn'),
        startTurns: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'startTurn').length,
        timersCancelled: events.filter((e) => e.timerCanceledEventAttributes).length,
      };
    };
    expect(await shape('session-turns-admitted-by-update.binpb')).toEqual({ patches: [], finishTurnSteps: 2, beginTurnSteps: 2, startTurns: 0, timersCancelled: 1 });
    expect(await shape('session-turns-finished-in-model-call.binpb')).toEqual({ patches: [FINISH_IN_MODEL_CALL], finishTurnSteps: 0, beginTurnSteps: 2, startTurns: 0, timersCancelled: 1 });
    expect(await shape('session-turns-begun-in-model-call.binpb')).toEqual({
      patches: [FINISH_IN_MODEL_CALL, BEGIN_IN_MODEL_CALL, IDLE_TIMER_ACROSS_TURNS],
      finishTurnSteps: 0,
      beginTurnSteps: 0,
      startTurns: 2,
      timersCancelled: 0,
    });
    // startTurn's call overflowed: the begin is read again (one beginTurn step), then the session compacts.
    expect(await shape('session-overflow-at-start-turn.binpb')).toMatchObject({ beginTurnSteps: 1, startTurns: 1 });
    // A tool activity failed on every attempt: the workflow answered the call with a storeToolFailure step.
    const failed = temporal.api.history.v1.History.decode(await readFile(join(dir, 'session-tool-activity-failed.binpb')));
    const failedMarkers = (failed.events ?? []).map((e) => e.markerRecordedEventAttributes).filter((m) => m != null);
    const markerText = failedMarkers.map((m) => Buffer.from(m!.details?.data?.payloads?.[0]?.data ?? m!.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8'));
    expect(markerText.some((t) => t.includes(TOOL_FAILURE_RESULT))).toBe(true);
    expect(markerText.filter((t) => t.includes('"storeToolFailure"'))).toHaveLength(1);
    // History keeps the last of its three attempts.
    expect((failed.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []))).toContain(3);
    expect((failed.events ?? []).filter((e) => e.activityTaskFailedEventAttributes)).toHaveLength(1);
  });

  it('holds a run refused for KEEL_ALLOWED_AGENTS that closed at once, without an idle timer', async () => {
    const history = temporal.api.history.v1.History.decode(await readFile(join(__dirname, 'histories', 'session-refused-agent-closes.binpb')));
    const events = history.events ?? [];
    const markers = events.flatMap((e) => (e.markerRecordedEventAttributes?.markerName === 'core_patch' ? [Buffer.from(e.markerRecordedEventAttributes.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8')] : []));
    expect(markers.some((m) => m.includes(REFUSED_AGENT_CLOSES))).toBe(true);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toEqual([]);
    expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
  });

  it('hold a subagent run steered mid-run: the steer Update admitted, then one announce with both answers', async () => {
    const dir = join(__dirname, 'histories');
    const announces = async (file: string) => {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      const events = history.events ?? [];
      const patchIds = events
        .map((e) => e.markerRecordedEventAttributes)
        .filter((m) => m?.markerName === 'core_patch')
        .map((m) => Buffer.from(m!.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8'));
      const patched = patchIds.some((id) => id.includes(SUBAGENT_ONE_ANNOUNCE_PER_RUN));
      const steers = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'steer').length;
      const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'announceToParent');
      const answers = scheduled.map((a) => (JSON.parse(Buffer.from(a!.input?.payloads?.[0]?.data ?? []).toString('utf8')) as { answers?: Array<{ key: string }> }).answers?.map((x) => x.key.split(':')[0]));
      return { patched, steers, answers };
    };
    expect(await announces('session-subagent-steered-mid-run.binpb')).toEqual({ patched: true, steers: 1, answers: [['task', 'steer']] });
    // Recorded before the patch: one announce, of one answer in the older shape.
    expect(await announces('session-subagent-run.binpb')).toEqual({ patched: false, steers: 0, answers: [undefined] });
  });

  it('hold a turn its sender cancelled: the signal, the model call asked to cancel, then the next turn', async () => {
    const history = temporal.api.history.v1.History.decode(await readFile(join(__dirname, 'histories', 'session-turn-cancelled.binpb')));
    const events = history.events ?? [];
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'cancelRequest')).toHaveLength(1);
    expect(events.filter((e) => e.activityTaskCancelRequestedEventAttributes)).toHaveLength(1);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'startTurn')).toHaveLength(2);
  });
  it('hold an agent task: one request with its prompt mode and tools, then the run completes with the reply as its result', async () => {
    const history = temporal.api.history.v1.History.decode(await readFile(join(__dirname, 'histories', 'session-agent-task.binpb')));
    const events = history.events ?? [];
    const input = JSON.parse(Buffer.from(events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!.data!).toString('utf8'));
    expect(input.task).toEqual({ promptMode: 'minimal', tools: ['lookup'] });
    const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled).toEqual(['startTurn', 'runTool', 'callModel']);
    const completed = events.at(-1)!.workflowExecutionCompletedEventAttributes!;
    expect(JSON.parse(Buffer.from(completed.result!.payloads![0]!.data!).toString('utf8'))).toMatchObject({ reply: 'keel: found', sessionKey: 'agent:replay:task-1', modelCalls: 2 });
  });

  it('hold compactions before and after the summary on the prompt cache: one call on the cache instead of the chunks, or the chunks', async () => {
    const dir = join(__dirname, 'histories');
    const shape = async (file: string) => {
      const events = temporal.api.history.v1.History.decode(await readFile(join(dir, file))).events ?? [];
      const patches = events.flatMap((e) => (e.markerRecordedEventAttributes?.markerName === 'core_patch' ? [Buffer.from(e.markerRecordedEventAttributes.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8')] : []));
      const scheduled = (name: string) => events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
      return { patched: patches.some((p) => p.includes(SUMMARY_ON_PROMPT_CACHE)), onCache: scheduled('summarizeOnCache'), chunks: scheduled('summarizeChunk') };
    };
    expect(await shape('compaction-summary-on-prompt-cache.binpb')).toEqual({ patched: true, onCache: 1, chunks: 0 });
    // An overflow's compaction never asks on the cache; recorded before the patch either way.
    expect(await shape('compaction-within-learned-window.binpb')).toMatchObject({ patched: false, onCache: 0 });
  });
});
