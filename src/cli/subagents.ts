/** `keel subagents`: list runs, kill one, steer one — for an operator, next to what the parent's tools do. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { SessionSignals } from '../runtime/deps';
import { getSubagentRun, listSubagentRuns, type SubagentRun } from '../store/subagent-runs-repo';
import { killSubagent, steerSubagent } from '../subagents/control';
import { UsageError } from './connect';

export interface SubagentListing {
  readonly id: string;
  readonly label: string | null;
  readonly status: string;
  readonly mode: string;
  readonly depth: number;
  readonly agentId: string;
  readonly parentSessionKey: string;
  readonly childSessionKey: string;
  readonly task: string;
  readonly createdAt: string;
  readonly endedAt: string | null;
  readonly result: string | null;
}

export async function subagentsList(opts: {
  db: Kysely<Database>;
  parentSessionKey?: string;
  agentId?: string;
  json?: boolean;
}): Promise<{ subagents: SubagentListing[] }> {
  const runs = await listSubagentRuns(opts.db, {
    ...(opts.agentId ? { agentId: opts.agentId } : {}),
    ...(opts.parentSessionKey ? { parentSessionKey: opts.parentSessionKey } : {}),
    limit: 200,
  });
  const subagents = runs.map(listing);
  if (!opts.json) {
    if (subagents.length === 0) process.stderr.write('no subagent runs\n');
    for (const s of subagents) {
      const task = s.task.replace(/\s+/g, ' ');
      process.stderr.write(
        `${s.id}  ${s.status.padEnd(7)} ${s.mode.padEnd(7)} ${s.parentSessionKey} → ${s.childSessionKey}${s.label ? `  "${s.label}"` : ''}\n    ${task.length > 100 ? `${task.slice(0, 100)}…` : task}\n`,
      );
    }
  }
  return { subagents };
}

/** Where a kill's or a steer's outcome is said: stderr for the CLI, the server's log for the API. */
type Say = (line: string, fields: { readonly subagentId: string }) => void;

const toStderr: Say = (line) => void process.stderr.write(`${line}\n`);

/** `keel subagents kill`: cancels a run of `agentId`'s sessions and says what happened (`say`, default stderr). */
export async function subagentsKill(opts: {
  db: Kysely<Database>;
  sessions: SessionSignals;
  agentId: string;
  id: string;
  say?: Say;
}): Promise<{ id: string; killed: boolean; message: string }> {
  const run = await existingRun(opts.db, opts.agentId, opts.id);
  const result = await killSubagent(opts.db, opts.sessions, run);
  (opts.say ?? toStderr)(result.message, { subagentId: run.id });
  return { id: run.id, ...result };
}

/** `keel subagents steer`: sends a run `text` and says what happened (`say`, default stderr). */
export async function subagentsSteer(opts: {
  db: Kysely<Database>;
  sessions: SessionSignals;
  agentId: string;
  id: string;
  text: string;
  say?: Say;
}): Promise<{ id: string; sent: boolean; message: string }> {
  const run = await existingRun(opts.db, opts.agentId, opts.id);
  const result = await steerSubagent(opts.db, opts.sessions, run, opts.text, `steer:cli:${randomUUID()}`);
  (opts.say ?? toStderr)(result.message, { subagentId: run.id });
  return { id: run.id, ...result };
}

/** A run spawned by `agentId`'s sessions; another agent's id is refused like an unknown one. */
async function existingRun(db: Kysely<Database>, agentId: string, id: string): Promise<SubagentRun> {
  const run = await getSubagentRun(db, agentId, id);
  if (!run) throw new SubagentNotFoundError(id, agentId);
  return run;
}

/** No subagent run of that id for the agent (another agent's runs need its --agent): a usage error, a 404 over HTTP. */
export class SubagentNotFoundError extends UsageError {
  constructor(
    readonly id: string,
    readonly agentId: string,
  ) {
    super(
      `no subagent run ${id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id} for agent ${agentId}; \`keel subagents --agent ${agentId}\` lists them`,
    );
  }
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
    createdAt: new Date(r.created_at as unknown as string).toISOString(),
    endedAt: r.ended_at ? new Date(r.ended_at as unknown as string).toISOString() : null,
    result: r.result,
  };
}
