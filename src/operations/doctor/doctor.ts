/**
 * The doctor operation (`keel doctor [--fix]`): checks what the database holds against the rules the
 * runtime relies on, and with `fix` repairs what can be repaired without losing anything. Every
 * repair is idempotent (a second run finds nothing to do).
 */
import { sql, type Kysely } from 'kysely';
import { atRestOf } from '../../security/at-rest';
import { sealedRow } from '../../security/sealed-rows';
import type { Database } from '../../store/schema';
import type { Selectable } from 'kysely';
import { appendEntries } from '../../store/entries-repo';
import { markFailed } from '../../store/compactions-repo';
import { compactionWorkflowId } from '../../protocol';
import { sessionWorkflowId } from '../../sessions/session-key';
import { hasPartialStop, syntheticToolResult, toolCallsOf } from '../../context/message-parts';
import type { AgentMessage, TranscriptEntry } from '../../context/types';

/** The checks doctor runs, each finding named by one. */
export type DoctorCheck =
  'tool-pairing' | 'parent-chain' | 'orphaned-rows' | 'counters' | 'stuck-compaction' | 'workflow-gone';

/** One problem found. `repair` says what `--fix` does (or did) about it. */
export interface DoctorFinding {
  readonly check: DoctorCheck;
  readonly agentId: string;
  readonly sessionKey: string | null;
  readonly sessionId: string;
  readonly detail: string;
  /** `fixed` (this run repaired it), `fixable` (run with --fix) or `read-time` (harmless: every context the model sees drops it). */
  readonly repair: 'fixed' | 'fixable' | 'read-time';
}

/** What a doctor run found and fixed, and the checks it skipped. */
export interface DoctorReport {
  readonly findings: DoctorFinding[];
  readonly fixed: number;
  /** Findings `--fix` would repair (0 after a --fix run). */
  readonly fixable: number;
  /** Checks that did not run, and why. */
  readonly skipped: string[];
}

/** Whether to repair, which agent, and what counts as stuck; how to ask Temporal about workflows. */
export interface DoctorOptions {
  readonly fix: boolean;
  readonly agentId?: string;
  /** A `running` compaction older than this is stuck (its workflow would have finished or failed it). */
  readonly stuckAfterMinutes: number;
  readonly now: Date;
  /** How doctor asks Temporal about a workflow, or why it cannot (that check is then reported skipped). */
  readonly workflows: WorkflowLookup | { readonly skipped: string };
}

/** A workflow's status name (`RUNNING`, `COMPLETED`, `TERMINATED`, …), or `NOT_FOUND`. */
export interface WorkflowLookup {
  status(workflowId: string): Promise<string>;
}

/** Rows as stored, undecoded: doctor inspects rows that may not be what their `type` says. */
type StoredRow = Selectable<Database['transcript_entries']>;

type Found = Omit<DoctorFinding, 'repair'> & { repairable: boolean; apply?: () => Promise<unknown> };

/** Runs every check over the store (one agent's sessions when `agentId`), repairing with `fix`. */
export async function runDoctor(db: Kysely<Database>, opts: DoctorOptions): Promise<DoctorReport> {
  let sessions = db
    .selectFrom('sessions')
    .select(['agent_id', 'session_key', 'session_id', 'compaction_count'])
    .orderBy('agent_id')
    .orderBy('session_key');
  if (opts.agentId) sessions = sessions.where('agent_id', '=', opts.agentId);
  const found: Found[] = [];
  for (const s of await sessions.execute()) {
    const entries = await db
      .selectFrom('transcript_entries')
      .selectAll()
      .where('agent_id', '=', s.agent_id)
      .where('session_id', '=', s.session_id)
      .orderBy('seq')
      .execute();
    const where = { agentId: s.agent_id, sessionKey: s.session_key, sessionId: s.session_id };
    found.push(...(await toolPairing(db, entries, where, opts.now)));
    found.push(...parentChain(db, entries, where));
    // A revert's entry restores an earlier window; it is not a compaction and is not counted.
    const compactions = entries.filter(
      (e) => e.type === 'compaction' && (e.payload as { revertOf?: unknown }).revertOf === undefined,
    ).length;
    if (compactions !== s.compaction_count) {
      found.push({
        check: 'counters',
        ...where,
        detail: `compaction_count is ${s.compaction_count} but the transcript holds ${compactions} compaction entries (reverts not counted)`,
        repairable: true,
        apply: () =>
          db
            .updateTable('sessions')
            .set({ compaction_count: compactions })
            .where('agent_id', '=', s.agent_id)
            .where('session_key', '=', s.session_key)
            .where('session_id', '=', s.session_id)
            .execute(),
      });
    }
  }
  found.push(...(await orphanedPendingArgs(db, opts.agentId)));
  found.push(...(await stuckCompactions(db, opts)));
  const skipped: string[] = [];
  if ('skipped' in opts.workflows)
    skipped.push(`workflow-gone: sessions whose workflow is gone were not checked: ${opts.workflows.skipped}`);
  else found.push(...(await workflowGone(db, opts, opts.workflows)));

  const findings: DoctorFinding[] = [];
  let fixed = 0;
  for (const f of found) {
    const { repairable, apply, ...finding } = f;
    if (repairable && opts.fix && apply) {
      await apply();
      fixed++;
    }
    findings.push({ ...finding, repair: !repairable ? 'read-time' : opts.fix ? 'fixed' : 'fixable' });
  }
  return {
    findings,
    fixed,
    fixable: findings.filter((f) => f.repair === 'fixable').length,
    skipped,
  };
}

type Where = { agentId: string; sessionKey: string; sessionId: string };

/**
 * A tool call without a result (and no pending run: the tool is not about to run) gets the same
 * synthetic error result the context pipeline inserts on every read, appended once under a
 * deterministic id. A result without its call is dropped on every read; the append-only transcript keeps it.
 */
async function toolPairing(db: Kysely<Database>, entries: StoredRow[], where: Where, now: Date): Promise<Found[]> {
  const calls = new Map<string, { name: string; entryId: string }>();
  const results = new Set<string>();
  const out: Found[] = [];
  for (const e of entries) {
    if (e.type !== 'message') continue;
    const message = (e.payload as { message?: AgentMessage }).message;
    if (!message) continue;
    if (message.role === 'assistant' && !hasPartialStop(message))
      for (const c of toolCallsOf(message)) calls.set(c.id, { name: c.name, entryId: e.id });
    if (message.role === 'toolResult') {
      if (!calls.has(message.toolCallId))
        out.push({
          check: 'tool-pairing',
          ...where,
          detail: `entry ${e.id}: result for tool call ${message.toolCallId}, which no earlier assistant message made (dropped from every context)`,
          repairable: false,
        });
      results.add(message.toolCallId);
    }
  }
  const pending = new Set(
    (
      await db
        .selectFrom('pending_tool_args')
        .select('tool_call_id')
        .where('agent_id', '=', where.agentId)
        .where('session_id', '=', where.sessionId)
        .execute()
    ).map((r) => r.tool_call_id),
  );
  for (const [id, call] of calls) {
    if (results.has(id) || pending.has(id)) continue;
    out.push({
      check: 'tool-pairing',
      ...where,
      detail: `entry ${call.entryId}: tool call ${id} (${call.name}) has no result; --fix appends the synthetic error result the model already sees`,
      repairable: true,
      apply: async () => {
        const last = await db
          .selectFrom('transcript_entries')
          .select('id')
          .where('agent_id', '=', where.agentId)
          .where('session_id', '=', where.sessionId)
          .orderBy('seq', 'desc')
          .limit(1)
          .executeTakeFirst();
        const entry: TranscriptEntry = {
          type: 'message',
          id: `doctor-result-${id}`,
          parentId: last?.id ?? null,
          timestamp: now.toISOString(),
          message: syntheticToolResult({ id, name: call.name }),
        };
        return appendEntries(db, where.agentId, where.sessionId, [{ entry, tokenEstimate: null }]);
      },
    });
  }
  return out;
}

/**
 * An entry whose parent is not in its transcript (the first kept entry after maintenance capping is
 * exempt: its parent was capped away). --fix links it to the entry stored before it.
 */
function parentChain(db: Kysely<Database>, entries: StoredRow[], where: Where): Found[] {
  const ids = new Set(entries.map((e) => e.id));
  const firstBody = entries.find((e) => e.type !== 'session');
  const out: Found[] = [];
  entries.forEach((e, i) => {
    if (e.parent_id === null || ids.has(e.parent_id) || e === firstBody || i === 0) return;
    const previous = entries[i - 1]!;
    out.push({
      check: 'parent-chain',
      ...where,
      detail: `entry ${e.id}: parent ${e.parent_id} is not in the transcript; --fix links it to ${previous.id}, the entry stored before it`,
      repairable: true,
      apply: () =>
        db
          .updateTable('transcript_entries')
          // Rewritten whole (not jsonb_set): a payload sealed at rest is opened here and sealed again.
          .set({
            parent_id: previous.id,
            payload: atRestOf(db).json(
              { ...e.payload, parentId: previous.id },
              sealedRow.entryPayload(where.agentId, where.sessionId, e.id),
            ),
          })
          .where('agent_id', '=', where.agentId)
          .where('session_id', '=', where.sessionId)
          .where('id', '=', e.id)
          .execute(),
    });
  });
  return out;
}

/** Raw tool arguments left behind by a transcript that is no longer any key's current one: no turn will run that tool. */
async function orphanedPendingArgs(db: Kysely<Database>, agentId?: string): Promise<Found[]> {
  let q = db
    .selectFrom('pending_tool_args as p')
    .select(['p.agent_id', 'p.session_id', sql<number>`count(*)::int`.as('n')])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('sessions as s')
            .select('s.session_id')
            .whereRef('s.agent_id', '=', 'p.agent_id')
            .whereRef('s.session_id', '=', 'p.session_id'),
        ),
      ),
    )
    .groupBy(['p.agent_id', 'p.session_id']);
  if (agentId) q = q.where('p.agent_id', '=', agentId);
  return (await q.execute()).map((r) => ({
    check: 'orphaned-rows' as const,
    agentId: r.agent_id,
    sessionKey: null,
    sessionId: r.session_id,
    detail: `${r.n} pending tool argument rows of a transcript that is no session's current one (rotated or pruned); --fix deletes them`,
    repairable: true,
    apply: () =>
      db
        .deleteFrom('pending_tool_args')
        .where('agent_id', '=', r.agent_id)
        .where('session_id', '=', r.session_id)
        .execute(),
  }));
}

async function stuckCompactions(db: Kysely<Database>, opts: DoctorOptions): Promise<Found[]> {
  let q = db
    .selectFrom('compactions')
    .selectAll()
    .where('status', '=', 'running')
    .where('started_at', '<', new Date(opts.now.getTime() - opts.stuckAfterMinutes * 60_000));
  if (opts.agentId) q = q.where('agent_id', '=', opts.agentId);
  return (await q.orderBy('started_at').execute()).map((row) => ({
    check: 'stuck-compaction' as const,
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    detail: `compaction ${row.id} has been running since ${new Date(row.started_at).toISOString()}; --fix marks it failed (then: keel compactions retry ${row.id} --agent ${row.agent_id})`,
    repairable: true,
    apply: () =>
      markFailed(
        db,
        row.agent_id,
        row.id,
        `stuck in running for over ${opts.stuckAfterMinutes} minutes; marked failed by keel doctor`,
        opts.now,
      ),
  }));
}

/**
 * Work the store says is under way while the workflow doing it is not running (a terminated or reset
 * workflow, a history deleted by hand): a `running` compaction row (one younger than the stuck limit;
 * older ones are stuck-compaction findings) whose compaction workflow is not running, and raw tool
 * arguments of a session's current transcript whose session workflow is not running (that turn never
 * resumes; the next turn would release them anyway).
 */
async function workflowGone(db: Kysely<Database>, opts: DoctorOptions, workflows: WorkflowLookup): Promise<Found[]> {
  const out: Found[] = [];
  let running = db
    .selectFrom('compactions')
    .selectAll()
    .where('status', '=', 'running')
    .where('started_at', '>=', new Date(opts.now.getTime() - opts.stuckAfterMinutes * 60_000));
  if (opts.agentId) running = running.where('agent_id', '=', opts.agentId);
  for (const row of await running.orderBy('started_at').execute()) {
    const workflowId = row.workflow_id ?? compactionWorkflowId(row.agent_id, row.session_key);
    const status = await workflows.status(workflowId);
    if (status === 'RUNNING') continue;
    out.push({
      check: 'workflow-gone',
      agentId: row.agent_id,
      sessionKey: row.session_key,
      sessionId: row.session_id,
      detail: `compaction ${row.id} is running in the store but its workflow ${workflowId} is ${status}; --fix marks it failed (then: keel compactions retry ${row.id} --agent ${row.agent_id})`,
      repairable: true,
      apply: () =>
        markFailed(
          db,
          row.agent_id,
          row.id,
          `its workflow ${workflowId} is ${status}; marked failed by keel doctor`,
          opts.now,
        ),
    });
  }
  // Arguments saved after this point belong to a turn that started since: never deleted by this run.
  const listedAt = new Date();
  let pending = db
    .selectFrom('pending_tool_args as p')
    .innerJoin('sessions as s', (j) =>
      j.onRef('s.agent_id', '=', 'p.agent_id').onRef('s.session_id', '=', 'p.session_id'),
    )
    .select(['s.agent_id', 's.session_key', 's.session_id', sql<number>`count(*)::int`.as('n')])
    .groupBy(['s.agent_id', 's.session_key', 's.session_id'])
    .orderBy('s.agent_id')
    .orderBy('s.session_key');
  if (opts.agentId) pending = pending.where('s.agent_id', '=', opts.agentId);
  for (const r of await pending.execute()) {
    let workflowId: string;
    try {
      workflowId = sessionWorkflowId(r.agent_id, r.session_key);
    } catch {
      continue; // a key no workflow can have (an imported one): no turn ever ran for it
    }
    const status = await workflows.status(workflowId);
    if (status === 'RUNNING') continue;
    out.push({
      check: 'workflow-gone',
      agentId: r.agent_id,
      sessionKey: r.session_key,
      sessionId: r.session_id,
      detail: `${r.n} tool calls wait for their run with raw arguments kept, but the session workflow ${workflowId} is ${status}: that turn will not resume; --fix deletes the arguments (the calls then get the synthetic error result, as the next turn would give them)`,
      repairable: true,
      apply: () =>
        db
          .deleteFrom('pending_tool_args')
          .where('agent_id', '=', r.agent_id)
          .where('session_id', '=', r.session_id)
          .where('created_at', '<', listedAt)
          .execute(),
    });
  }
  return out;
}
