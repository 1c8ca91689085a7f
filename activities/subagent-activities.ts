/**
 * The steps of a subagent's life that touch the database: checking and recording a spawn (the
 * parent's workflow starts the child workflow between the two), and announcing a child's result to
 * its parent. The announce is a request to the parent's session workflow under a key derived from
 * the child's request, and the parent's turn claims that key before writing: it lands once.
 */
import { describeStopReason } from '../src/turn/run-budget';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import {
  FailureTypes,
  SESSIONS_SPAWN_TOOL as SESSIONS_SPAWN,
  announceRequestId,
  type RunBudget,
  type SessionTuning,
  type SubagentAnswer,
} from '../src/protocol';
import { buildSessionKey } from '../src/sessions/session-key';
import { getSession } from '../src/store/sessions-repo';
import { getEntry } from '../src/store/entries-repo';
import { logRedactions } from './parts/model-call-report';
import {
  getSubagentRun,
  insertSubagentRun,
  liveChildren,
  runOfChildSession,
  updateSubagentRun,
  type SubagentRun,
} from '../src/store/subagent-runs-repo';
import { renderSpawnTask, sessionsSpawnInput } from '../src/subagents/spawn-input';
import { spawnNotAllowed } from '../src/subagents/allow-agents';
import { saveSpawnFiles } from './parts/spawn-attachments';
import { announceText, type AnnouncedPart, type SubagentOutcome } from '../src/subagents/announce-text';
import { toolCallArguments } from '../src/context/types';
import {
  errorOutput,
  loadToolCall,
  storeToolResult,
  storedToolResult,
  textOutput,
  type ToolCallRef,
} from './parts/tool-call-io';
import { engineOf } from './parts/context-engine';
import { nextSpawnDepth, subagentIdOf } from './parts/subagent-runs';

export interface SpawnStepInput extends ToolCallRef {
  readonly sessionKey: string;
  /** Chosen by the workflow: the child's session key and the run's id. */
  readonly subagentId: string;
}

export type PrepareSpawnResult =
  | { readonly kind: 'refused'; readonly entryId: string }
  | {
      readonly kind: 'spawn';
      readonly childAgentId: string;
      readonly childSessionKey: string;
      readonly mode: 'run' | 'session';
      readonly label?: string;
      /** The run budget the spawn asked for (absent: the child agent's own). */
      readonly budget?: RunBudget;
    };

export interface RecordSpawnInput extends SpawnStepInput {
  readonly workflowId: string;
}

export interface AnnounceInput {
  /** The child session. */
  readonly agentId: string;
  readonly sessionKey: string;
  /** The child request this result answers (`killed` for a kill): with the subagent id, the announce's identity. */
  readonly key: string;
  readonly outcome: SubagentOutcome;
  /** The child's final reply entry when the request succeeded. */
  readonly replyEntryId?: string;
  /** Why the request failed, when it did. */
  readonly error?: string;
  /**
   * Every answer of the run in the order the child gave them (the task's, then each steer's); for a
   * kill, those not told yet. Absent on announces scheduled by workflow code older than it: their one
   * answer is `outcome` with `replyEntryId` or `error`.
   */
  readonly answers?: readonly SubagentAnswer[];
  /** The parent's activity timeouts, for a parent workflow this announce has to start again. */
  readonly tuning?: SessionTuning;
  readonly now: string;
}

export interface AnnounceResult {
  /** The run has ended (`run` mode, or killed): the child's workflow closes. */
  readonly ended: boolean;
}

/** A subagent's steps: its spawn checked and recorded, and its announce to the parent. */
export function createSubagentActivities(allDeps: ActivityDeps) {
  const ctx: SubagentActivityContext = { allDeps, db: allDeps.db };
  return {
    prepareSpawn: (input: SpawnStepInput) => prepareSpawn(ctx, input),
    recordSpawn: (input: RecordSpawnInput) => recordSpawn(ctx, input),
    announceToParent: (input: AnnounceInput) => announceToParent(ctx, input),
  };
}

/** What the subagent activities of a worker share. */
interface SubagentActivityContext {
  readonly allDeps: ActivityDeps;
  readonly db: ActivityDeps['db'];
}

/** Checks a `sessions_spawn` call and records the run; a refusal is stored as the call's error result. */
async function prepareSpawn(ctx: SubagentActivityContext, input: SpawnStepInput): Promise<PrepareSpawnResult> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const existing = await getSubagentRun(ctx.db, input.agentId, input.subagentId);
  if (existing) return spawnOf(existing);
  const done = await storedToolResult(deps, input);
  if (done) return { kind: 'refused', entryId: done.entryId };
  const refuse = async (why: string): Promise<PrepareSpawnResult> => {
    const stored = await storeToolResult(deps, input, SESSIONS_SPAWN, errorOutput(`sessions_spawn refused: ${why}`));
    return { kind: 'refused', entryId: stored.entryId };
  };
  const call = await loadToolCall(deps, input);
  if (!call) return refuse(`tool call ${input.toolCallId} not found`);
  const parsed = sessionsSpawnInput.safeParse(toolCallArguments(call) ?? {});
  if (!parsed.success)
    return refuse(parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; '));
  const task = renderSpawnTask(parsed.data, `attachments/${input.subagentId}`);
  if ('problem' in task) return refuse(task.problem);
  const childAgentId = parsed.data.agentId ?? input.agentId;
  const notAllowed = spawnNotAllowed(deps.config.subagentAllowAgents, input.agentId, childAgentId);
  if (notAllowed) return refuse(notAllowed);
  const depth = await nextSpawnDepth(ctx.db, input.agentId, input.sessionKey);
  if (depth > deps.config.subagentMaxDepth) {
    return refuse(
      `spawn depth ${depth} is over this agent's limit of ${deps.config.subagentMaxDepth} (subagentMaxDepth); do the work yourself`,
    );
  }
  const live = await liveChildren(ctx.db, input.agentId, input.sessionKey);
  if (live.length >= deps.config.subagentMaxChildren) {
    return refuse(
      `${live.length} subagents are already running (${live.map((r) => r.id).join(', ')}), the limit is ${deps.config.subagentMaxChildren} (subagentMaxChildren); wait for their results or kill one with the subagents tool`,
    );
  }
  let childSessionKey: string;
  try {
    childSessionKey = buildSessionKey({ kind: 'subagent', agentId: childAgentId, subagentId: input.subagentId });
  } catch (err) {
    return refuse(`agentId: ${err instanceof Error ? err.message : String(err)}`);
  }
  const unsaved = await saveSpawnFiles(depsForAgent(ctx.allDeps, childAgentId), childAgentId, task.files);
  if (unsaved) return refuse(unsaved);
  await engineOf(deps).prepareSubagentSpawn({ parentSessionKey: input.sessionKey, childSessionKey });
  const taskRedactions = await insertSubagentRun(ctx.db, {
    id: input.subagentId,
    agent_id: input.agentId,
    parent_session_key: input.sessionKey,
    parent_session_id: input.sessionId,
    child_session_key: childSessionKey,
    child_agent_id: childAgentId,
    mode: parsed.data.mode ?? 'run',
    depth,
    status: 'running',
    task: task.text,
    label: parsed.data.label ?? null,
    budget: parsed.data.budget ? JSON.stringify(parsed.data.budget) : null,
    tool_call_id: input.toolCallId,
    created_at: input.now,
    updated_at: input.now,
  });
  logRedactions('subagent_task', taskRedactions, { subagentId: input.subagentId });
  return spawnOf((await getSubagentRun(ctx.db, input.agentId, input.subagentId))!);
}

/** The spawn's tool result, once the child workflow runs. */
async function recordSpawn(ctx: SubagentActivityContext, input: RecordSpawnInput): Promise<{ entryId: string }> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  await ctx.db
    .updateTable('subagent_runs')
    .set({ workflow_id: input.workflowId })
    .where('agent_id', '=', input.agentId)
    .where('id', '=', input.subagentId)
    .execute();
  const done = await storedToolResult(deps, input);
  if (done) return { entryId: done.entryId };
  const run = (await getSubagentRun(ctx.db, input.agentId, input.subagentId))!;
  const text =
    `Spawned subagent ${run.id}${run.label ? ` ("${run.label}")` : ''} in session ${run.child_session_key} (mode ${run.mode}). ` +
    'It works on its own; its result arrives here as a message when it finishes. Do not spawn it again. ' +
    'sessions_history reads its transcript, sessions_send steers it, subagents lists or kills it.';
  return storeToolResult(deps, input, SESSIONS_SPAWN, textOutput(text));
}

/**
 * A child's result: recorded on its run, then admitted to the parent's session (started again if
 * it closed). Retried until Temporal takes it; the parent's claim makes a repeat harmless.
 */
async function announceToParent(ctx: SubagentActivityContext, input: AnnounceInput): Promise<AnnounceResult> {
  const run = subagentIdOf(input.sessionKey)
    ? await runOfChildSession(ctx.db, input.agentId, input.sessionKey)
    : undefined;
  if (!run) throw ApplicationFailure.nonRetryable(`no subagent run for ${input.sessionKey}`, FailureTypes.InvalidInput);
  // The parent session was reset since the spawn: the run was recorded killed then, nobody to tell.
  const parent = await getSession(ctx.db, run.agent_id, run.parent_session_key);
  if (parent && run.parent_session_id !== null && parent.session_id !== run.parent_session_id) return { ended: true };
  const parts = await announcedParts(ctx, input);
  const text = parts.map((p) => p.text).join('\n');
  const ended = run.mode === 'run' || input.outcome === 'killed';
  const status =
    input.outcome === 'done'
      ? ended
        ? 'done'
        : 'idle'
      : input.outcome === 'failed'
        ? ended
          ? 'failed'
          : 'idle'
        : 'killed';
  const resultRedactions = await updateSubagentRun(ctx.db, run, {
    status,
    result: text.slice(0, 4_000),
    updated_at: input.now,
    ...(ended ? { ended_at: input.now } : {}),
  });
  logRedactions('subagent_result', resultRedactions, { subagentId: run.id });
  if (ended) {
    const deps = depsForAgent(ctx.allDeps, input.agentId);
    const outcome = input.outcome === 'done' ? 'ok' : input.outcome === 'failed' ? 'error' : 'killed';
    await engineOf(deps).onSubagentEnded({ childSessionKey: input.sessionKey, outcome });
  }
  if (await parentWasKilled(ctx, run)) {
    log.info('subagent not announced: its parent, a subagent, was killed', {
      subagentId: run.id,
      parentSessionKey: run.parent_session_key,
      outcome: input.outcome,
    });
    return { ended };
  }
  if (!ctx.allDeps.sessions)
    throw new Error('this worker has no Temporal client for announces (ActivityDeps.sessions)');
  await ctx.allDeps.sessions.enqueue(
    { agentId: run.agent_id, sessionKey: run.parent_session_key, ...(input.tuning ? { tuning: input.tuning } : {}) },
    {
      requestId: announceRequestId(run.id, input.key),
      turn: {
        text: announceText({
          subagentId: run.id,
          label: run.label,
          childSessionKey: run.child_session_key,
          mode: run.mode,
          outcome: input.outcome,
          parts,
        }),
        event: 'subagent_announce',
        announce: { subagentId: run.id, key: input.key },
        // The parent's turn answers an event, not a client that listens: nothing to stream.
        streamReply: false,
      },
    },
  );
  log.info('subagent announced to its parent', {
    subagentId: run.id,
    parentSessionKey: run.parent_session_key,
    outcome: input.outcome,
    key: input.key,
  });
  return { ended };
}

/**
 * True when the parent is itself a subagent whose run was killed (its kill killed this run too):
 * nobody listens, and an announce would start the killed session again.
 */
async function parentWasKilled(ctx: SubagentActivityContext, run: SubagentRun): Promise<boolean> {
  if (!subagentIdOf(run.parent_session_key)) return false;
  return (await runOfChildSession(ctx.db, run.agent_id, run.parent_session_key))?.status === 'killed';
}

/** The run's answers as the parent reads them, each titled by what it answers; a kill comes last. */
async function announcedParts(ctx: SubagentActivityContext, input: AnnounceInput): Promise<AnnouncedPart[]> {
  const parts: AnnouncedPart[] = [];
  let steers = 0;
  for (const answer of input.answers ?? legacyAnswer(input)) {
    const title = answer.key.startsWith('task:') ? 'Answer to the task' : `Answer to message ${++steers} sent to it`;
    parts.push({
      title,
      text:
        answer.outcome === 'done'
          ? await replyText(ctx, input, answer.replyEntryId)
          : `the request failed: ${answer.error}`,
    });
  }
  if (input.outcome === 'killed') parts.push({ title: 'Killed', text: input.error ?? 'killed before it finished' });
  return parts;
}

async function replyText(ctx: SubagentActivityContext, input: AnnounceInput, replyEntryId: string): Promise<string> {
  const session = await getSession(ctx.db, input.agentId, input.sessionKey);
  const entry =
    session && replyEntryId ? await getEntry(ctx.db, input.agentId, session.session_id, replyEntryId) : undefined;
  const message =
    entry?.type === 'message' && entry.payload.message.role === 'assistant' ? entry.payload.message : undefined;
  const text = (message?.content ?? [])
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
  // A run cut at its budget says so: the parent decides whether to continue it.
  return message?.runStop ? `${text}\n\n(The subagent ${describeStopReason(message.runStop)}.)` : text;
}

/** The one answer an announce of older workflow code carries (none for a kill). */
function legacyAnswer(input: AnnounceInput): SubagentAnswer[] {
  if (input.outcome === 'done') return [{ key: input.key, outcome: 'done', replyEntryId: input.replyEntryId ?? '' }];
  if (input.outcome === 'failed') return [{ key: input.key, outcome: 'failed', error: input.error ?? 'unknown error' }];
  return [];
}

function spawnOf(run: SubagentRun): PrepareSpawnResult {
  return {
    kind: 'spawn',
    childAgentId: run.child_agent_id ?? run.agent_id,
    childSessionKey: run.child_session_key,
    mode: run.mode === 'session' ? 'session' : 'run',
    ...(run.label ? { label: run.label } : {}),
    ...(run.budget ? { budget: JSON.parse(run.budget) as RunBudget } : {}),
  };
}
