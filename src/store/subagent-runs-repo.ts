/** Reads and writes of `subagent_runs`: the subagents a parent session spawned. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, SubagentRunsTable } from './schema';

/** What a parent needs to know of a child still at work. */
export type RunningSubagent = Pick<Selectable<SubagentRunsTable>, 'id' | 'task' | 'status' | 'child_session_key'>;

/** The subagents of `parentSessionKey` still running, oldest first. */
export async function runningSubagentsOf(db: Kysely<Database>, input: { agentId: string; parentSessionKey: string }): Promise<RunningSubagent[]> {
  return db
    .selectFrom('subagent_runs')
    .select(['id', 'task', 'status', 'child_session_key'])
    .where('agent_id', '=', input.agentId)
    .where('parent_session_key', '=', input.parentSessionKey)
    .where('status', '=', 'running')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
