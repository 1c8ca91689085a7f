/** The subagent operations: list runs, kill one, steer one — for an operator, next to what the parent's tools do. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../store/schema';
import type { SessionSignals } from '../../runtime/deps';
import { getSubagentRun, listSubagentRuns, type SubagentRun } from '../../store/subagent-runs-repo';
import { killSubagent, steerSubagent } from '../../subagents/control';
import { SubagentNotFoundError } from '../errors';
import type { killResult, steerResult, subagentListing } from './subagent-views';

/** One subagent run, as `keel subagents` lists it. */
export type SubagentListing = z.infer<typeof subagentListing>;
/** A kill's outcome: whether it ended the run, and what happened in words. */
export type KillResult = z.infer<typeof killResult>;
/** A steer's outcome: whether the message was sent, and what happened in words. */
export type SteerResult = z.infer<typeof steerResult>;

/** Runs listed at most, newest first. */
const LIST_LIMIT = 200;

/** What kill and steer need: the store, and the signals that reach the runs' sessions. */
export interface SubagentControlDeps {
  readonly db: Kysely<Database>;
  readonly sessions: SessionSignals;
}

/** A run named by its id and the agent whose sessions spawned it (another agent's id is refused like an unknown one). */
export interface SubagentRef {
  readonly agentId: string;
  readonly id: string;
}

/** Subagent runs, newest first: all, or one agent's, or one parent session's. */
export async function listSubagents(
  deps: { readonly db: Kysely<Database> },
  input: { readonly parentSessionKey?: string | undefined; readonly agentId?: string | undefined } = {},
): Promise<{ subagents: SubagentListing[] }> {
  const runs = await listSubagentRuns(deps.db, {
    ...(input.agentId ? { agentId: input.agentId } : {}),
    ...(input.parentSessionKey ? { parentSessionKey: input.parentSessionKey } : {}),
    limit: LIST_LIMIT,
  });
  return { subagents: runs.map(listing) };
}

/** Cancels a run of `agentId`'s sessions; its parent hears the kill as the outcome. */
export async function killSubagentRun(deps: SubagentControlDeps, ref: SubagentRef): Promise<KillResult> {
  const run = await existingRun(deps.db, ref);
  return { id: run.id, ...(await killSubagent(deps.db, deps.sessions, run)) };
}

/** Sends a run `text`; its answer reaches its parent. */
export async function steerSubagentRun(
  deps: SubagentControlDeps,
  input: SubagentRef & { readonly text: string },
): Promise<SteerResult> {
  const run = await existingRun(deps.db, input);
  const result = await steerSubagent(deps.db, deps.sessions, run, input.text, `steer:cli:${randomUUID()}`);
  return { id: run.id, ...result };
}

async function existingRun(db: Kysely<Database>, ref: SubagentRef): Promise<SubagentRun> {
  const run = await getSubagentRun(db, ref.agentId, ref.id);
  if (!run) throw new SubagentNotFoundError(ref.id, ref.agentId);
  return run;
}

function listing(r: SubagentRun): SubagentListing {
  return {
    id: r.id,
    label: r.label,
    status: r.status,
    mode: r.mode,
    depth: r.depth,
    agentId: r.agent_id,
    parentSessionKey: r.parent_session_key,
    childSessionKey: r.child_session_key,
    task: r.task,
    createdAt: new Date(r.created_at).toISOString(),
    endedAt: r.ended_at ? new Date(r.ended_at).toISOString() : null,
    result: r.result,
  };
}
