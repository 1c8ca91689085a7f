import type { Kysely } from 'kysely';
import type { Database, SubagentRunsTable } from './schema';
import type { Insertable, Selectable, Updateable } from 'kysely';
import { redactSecrets, type Redaction } from '../security/redact';
import { storableText } from '../text/storable-text';
import { atRestOf } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';

export type SubagentRun = Selectable<SubagentRunsTable>;

/** A run is `running` while it has work, `idle` (a `session` child waiting for a message), or ended: `done`, `failed`, `killed`. */
export type SubagentStatus = 'running' | 'idle' | 'done' | 'failed' | 'killed';

export const ENDED_STATUSES: readonly SubagentStatus[] = ['done', 'failed', 'killed'];

/**
 * Records a spawn once: a retried spawn step finds its row. The task is stored redacted (it becomes
 * the child's first message) and, being conversation, sealed when encryption at rest is on.
 */
export async function insertSubagentRun(
  db: Kysely<Database>,
  row: Insertable<SubagentRunsTable>,
): Promise<readonly Redaction[]> {
  const { value: task, redactions } = redactSecrets(row.task);
  const values = {
    ...row,
    task: atRestOf(db).text(storableText(task), sealedRow.subagentRun('task', row.agent_id, row.id)),
  };
  await db
    .insertInto('subagent_runs')
    .values(values)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  return redactions;
}

/** A run spawned by one of `agentId`'s sessions (another agent's id reads as none). */
export async function getSubagentRun(
  db: Kysely<Database>,
  agentId: string,
  id: string,
): Promise<SubagentRun | undefined> {
  return db
    .selectFrom('subagent_runs')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The run behind a child session, seen from the child: its own agent and session key. */
export async function runOfChildSession(
  db: Kysely<Database>,
  childAgentId: string,
  childSessionKey: string,
): Promise<SubagentRun | undefined> {
  return db
    .selectFrom('subagent_runs')
    .selectAll()
    .where('child_session_key', '=', childSessionKey)
    .where((eb) =>
      eb.or([
        eb('child_agent_id', '=', childAgentId),
        eb.and([eb('child_agent_id', 'is', null), eb('agent_id', '=', childAgentId)]),
      ]),
    )
    .executeTakeFirst();
}

/** Children of a parent session that have not ended, oldest first (fan-out limit, the compaction summary's list, reset). */
export async function liveChildren(
  db: Kysely<Database>,
  agentId: string,
  parentSessionKey: string,
): Promise<SubagentRun[]> {
  return db
    .selectFrom('subagent_runs')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('parent_session_key', '=', parentSessionKey)
    .where('status', 'in', ['running', 'idle'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Runs for `keel subagents` and the `subagents` tool, newest first. */
export async function listSubagentRuns(
  db: Kysely<Database>,
  filter: { agentId?: string; parentSessionKey?: string; limit?: number },
): Promise<SubagentRun[]> {
  let q = db.selectFrom('subagent_runs').selectAll();
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  if (filter.parentSessionKey) q = q.where('parent_session_key', '=', filter.parentSessionKey);
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(filter.limit ?? 100)
    .execute();
}

/**
 * A steer is on its way: the run is `running` again unless it has ended (an ended run's status is
 * final; a steer racing the end must not write over it).
 */
export async function markSteered(
  db: Kysely<Database>,
  run: Pick<SubagentRun, 'agent_id' | 'id'>,
  now: string,
): Promise<void> {
  await db
    .updateTable('subagent_runs')
    .set({ status: 'running', updated_at: now })
    .where('agent_id', '=', run.agent_id)
    .where('id', '=', run.id)
    .where('ended_at', 'is', null)
    .execute();
}

/**
 * Ends a run killed before its workflow ran (`killSubagent`): `killed` unless it has ended already.
 * True when this call ended it. Its child, should it start after all, reads the status and cancels itself.
 */
export async function markKilled(
  db: Kysely<Database>,
  run: Pick<SubagentRun, 'agent_id' | 'id'>,
  now: string,
): Promise<boolean> {
  const updated = await db
    .updateTable('subagent_runs')
    .set({ status: 'killed', ended_at: now, updated_at: now })
    .where('agent_id', '=', run.agent_id)
    .where('id', '=', run.id)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** Updates a run of its parent's agent (another agent's run is left alone); a result is stored redacted. */
export async function updateSubagentRun(
  db: Kysely<Database>,
  run: Pick<SubagentRun, 'agent_id' | 'id'>,
  patch: Pick<Updateable<SubagentRunsTable>, 'status' | 'result' | 'workflow_id' | 'ended_at'> & { updated_at: string },
): Promise<readonly Redaction[]> {
  const redacted = typeof patch.result === 'string' ? redactSecrets(patch.result) : undefined;
  const result = redacted
    ? { result: atRestOf(db).text(storableText(redacted.value), sealedRow.subagentRun('result', run.agent_id, run.id)) }
    : {};
  await db
    .updateTable('subagent_runs')
    .set({ ...patch, ...result })
    .where('agent_id', '=', run.agent_id)
    .where('id', '=', run.id)
    .execute();
  return redacted?.redactions ?? [];
}

/**
 * Claims announce `key` of a subagent for the parent turn writing `parentEntryId`. True when this
 * turn holds the claim (first, or a retry of the same turn); false when another turn already took it.
 */
export async function claimAnnounce(
  db: Kysely<Database>,
  subagentId: string,
  key: string,
  parentEntryId: string,
  now: string,
): Promise<boolean> {
  await db
    .insertInto('subagent_announces')
    .values({ subagent_id: subagentId, announce_key: key, parent_entry_id: parentEntryId, created_at: now })
    .onConflict((oc) => oc.columns(['subagent_id', 'announce_key']).doNothing())
    .execute();
  const row = await db
    .selectFrom('subagent_announces')
    .select('parent_entry_id')
    .where('subagent_id', '=', subagentId)
    .where('announce_key', '=', key)
    .executeTakeFirst();
  return row?.parent_entry_id === parentEntryId;
}
