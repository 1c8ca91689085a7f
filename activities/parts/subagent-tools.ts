/**
 * The built-in tools a parent uses on its subagents: `sessions_spawn` (run by the session workflow
 * itself, which starts the child workflow; listed here so the model sees its schema),
 * `sessions_send` (steer), `sessions_history` (read the child's transcript in pages) and `subagents`
 * (list, steer, kill). A parent reaches only its own children.
 */
import { z } from 'zod';
import type { ActivityDeps, SessionSignals } from '../../src/runtime/deps';
import { erasedTool, type ToolContext, type ToolDefinition, type ToolOutput } from '../../src/tools/registry';
import { DEFAULTS } from '../../src/config/defaults';
import { getSession } from '../../src/store/sessions-repo';
import { entriesAfter } from '../../src/store/entries-repo';
import { getSubagentRun, listSubagentRuns, type SubagentRun } from '../../src/store/subagent-runs-repo';
import { killSubagent, steerSubagent } from '../../src/subagents/control';
import { sessionsSpawnInput } from '../../src/subagents/spawn-input';
import { renderHistoryEntry } from '../../src/subagents/render-history';
import { SESSIONS_SPAWN_TOOL as SESSIONS_SPAWN } from '../../src/protocol';
import { subagentIdOf } from './subagent-runs';

const target = z
  .string()
  .trim()
  .min(1, 'name the subagent: its id or its session key')
  .describe('the subagent id or its session key (agent:<id>:subagent:<uuid>)');

const sendInput = z.object({ target, message: z.string().trim().min(1, 'write the message to send') });
const historyInput = z.object({
  target,
  afterSeq: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('continue after this entry number (the previous page says which); default: from the start'),
});
const subagentsInput = z.object({
  action: z.enum(['list', 'steer', 'kill'], { message: 'use "list", "steer" or "kill"' }),
  target: target.optional(),
  message: z.string().trim().min(1).optional().describe('for steer: the message to send'),
});

/** What the subagent tools reach: the agent's database and the worker's Temporal client (absent: no subagents). */
interface SubagentToolDeps {
  readonly db: ActivityDeps['db'];
  readonly sessions: SessionSignals | undefined;
}

/** The subagent tools for one agent; `sessions` is the worker's Temporal client. */
export function subagentTools(deps: ActivityDeps, sessions: SessionSignals | undefined): ToolDefinition[] {
  const io: SubagentToolDeps = { db: deps.db, sessions };
  return [erasedTool(spawnTool()), erasedTool(sendTool(io)), erasedTool(historyTool(io)), erasedTool(manageTool(io))];
}

function spawnTool(): ToolDefinition<typeof sessionsSpawnInput> {
  return {
    name: SESSIONS_SPAWN,
    description:
      'Hand a task to a subagent: a fresh session of an agent that works on it alone and reports its result back to you as a message (about 500 tokens; its full transcript stays readable with sessions_history). ' +
      'It knows only what task and attachments say, so write the task in full. mode "run" (default) ends after the task; "session" stays and takes more messages through sessions_send.',
    input: sessionsSpawnInput,
    // The session workflow runs this call itself (it starts the child workflow); reaching here is a bug.
    async run() {
      return {
        content: [{ type: 'text', text: 'sessions_spawn is run by the session workflow, not as a tool activity' }],
        isError: true,
      };
    },
  };
}

function sendTool(io: SubagentToolDeps): ToolDefinition<typeof sendInput> {
  return {
    name: 'sessions_send',
    description:
      'Send a message to one of your subagents (steer it). Its reply arrives as a message when it has answered.',
    input: sendInput,
    run: (input, ctx) => answer(async () => steer(io, await ownRun(io, input.target, ctx), input.message, ctx)),
  };
}

function historyTool(io: SubagentToolDeps): ToolDefinition<typeof historyInput> {
  return {
    name: 'sessions_history',
    description: "Read one of your subagents' transcript, a page at a time (about 2,000 tokens per page).",
    input: historyInput,
    run: (input, ctx) => answer(async () => historyPage(io, await ownRun(io, input.target, ctx), input.afterSeq ?? 0)),
  };
}

function manageTool(io: SubagentToolDeps): ToolDefinition<typeof subagentsInput> {
  return {
    name: 'subagents',
    description:
      'List your subagents (id, label, state, task), steer one with a message, or kill one (its outcome arrives as a message).',
    input: subagentsInput,
    run: (input, ctx) =>
      answer(async () => {
        if (input.action === 'list')
          return listText(
            await listSubagentRuns(io.db, { agentId: ctx.agentId, parentSessionKey: ctx.sessionKey, limit: 50 }),
          );
        if (!input.target) throw new ToolInputError(`target: name the subagent to ${input.action}`);
        const run = await ownRun(io, input.target, ctx);
        if (input.action === 'steer') {
          if (!input.message) throw new ToolInputError('message: write the message to send');
          return steer(io, run, input.message, ctx);
        }
        return (await killSubagent(io.db, requireSessions(io), run)).message;
      }),
  };
}

function requireSessions(io: SubagentToolDeps): SessionSignals {
  if (!io.sessions) throw new Error('this worker has no Temporal client for subagents (ActivityDeps.sessions)');
  return io.sessions;
}

async function ownRun(io: SubagentToolDeps, ref: string, ctx: ToolContext): Promise<SubagentRun> {
  const id = subagentIdOf(ref) ?? ref;
  const run = await getSubagentRun(io.db, ctx.agentId, id);
  if (!run || run.parent_session_key !== ctx.sessionKey) {
    throw new ToolInputError(`target: "${ref}" is not one of your subagents; the subagents tool lists them`);
  }
  return run;
}

async function steer(io: SubagentToolDeps, run: SubagentRun, message: string, ctx: ToolContext): Promise<string> {
  // The idempotency key makes a retried tool call the same request: the child runs it once.
  return (await steerSubagent(io.db, requireSessions(io), run, message, `steer:${ctx.idempotencyKey}`)).message;
}

/** A page of a subagent's transcript after entry `afterSeq`, and where the next page starts. */
async function historyPage(io: SubagentToolDeps, run: SubagentRun, afterSeq: number): Promise<string> {
  const childAgent = run.child_agent_id ?? run.agent_id;
  const session = await getSession(io.db, childAgent, run.child_session_key);
  if (!session) return `subagent ${run.id} has not started its session yet`;
  const lines: string[] = [];
  let used = 0;
  let last = afterSeq;
  let more = false;
  for (const row of await entriesAfter(io.db, childAgent, session.session_id, afterSeq, 200)) {
    const line = renderHistoryEntry(row.payload);
    if (line === undefined) {
      last = Number(row.seq);
      continue;
    }
    if (used + line.length > DEFAULTS.subagentHistoryPageChars && lines.length > 0) {
      more = true;
      break;
    }
    lines.push(`#${row.seq} ${line}`);
    used += line.length;
    last = Number(row.seq);
  }
  if (lines.length === 0) return `no entries after #${afterSeq} (subagent ${run.id}, ${run.status})`;
  const tail = more
    ? `\n(more: call sessions_history again with afterSeq ${last})`
    : `\n(end of transcript; subagent is ${run.status})`;
  return lines.join('\n') + tail;
}

/** A mistake in the tool input: an error result the model reads, not a failed (retried) activity. */
class ToolInputError extends Error {}

async function answer(fn: () => Promise<string>): Promise<ToolOutput> {
  try {
    return { content: [{ type: 'text', text: await fn() }] };
  } catch (err) {
    if (err instanceof ToolInputError) return { content: [{ type: 'text', text: err.message }], isError: true };
    throw err;
  }
}

function listText(runs: readonly SubagentRun[]): string {
  if (runs.length === 0) return 'you have no subagents';
  return runs
    .map((r) => {
      const task = r.task.replace(/\s+/g, ' ').slice(0, 120);
      return `- ${r.id}${r.label ? ` "${r.label}"` : ''}: ${r.status}, mode ${r.mode}, task: ${task}${r.task.length > 120 ? '…' : ''}`;
    })
    .join('\n');
}
