import { constants } from 'node:fs';
import { access, appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Context, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { prepareContext } from './parts/prepare-context';
import { startHeartbeat } from './parts/heartbeat';
import { appendEntriesRedacted, getEntry, tailEntries } from '../src/store/entries-repo';
import { getSession } from '../src/store/sessions-repo';
import { recordMemoryFlush, recordMemoryFlushFailure } from '../src/store/memory-repo';
import { modelConfigured } from '../src/runtime/activity-deps';
import { fitRecentTail } from '../src/context/fit-recent-tail';
import { effectiveWindow, learnFromOverflow } from './parts/model-window';
import { isSilentReply } from '../src/context/silent-reply';
import { maxOutputTokensFor, reserveForWindow } from '../src/context/context-window';
import {
  MEMORY_CHECKPOINT_TOOL,
  MEMORY_FLUSH_PROMPT,
  MEMORY_WRITE_TOOL,
  collectMemoryWrites,
} from '../src/turn/memory-flush';
import { localDate, type MemoryCheckpoint } from '../src/context/prompt-sections';
import { systemPromptForTurn } from './parts/system-prompt-for-turn';
import {
  isToolCallBlock,
  type AgentMessage,
  type AssistantMessage,
  type CustomEntry,
  type ToolCallBlock,
} from '../src/context/types';
import { toActivityFailure } from '../src/model/failures';
import { redactSecrets } from '../src/security/redact';
import { logRedactions } from './parts/model-call-report';
import { modelOf } from './parts/session-model';
import { ReceivedReplies } from './parts/received-replies';

export interface MemoryFlushInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** Deterministic id (workflow code): the audit entry's id and the prefix of the note ids. */
  readonly flushId: string;
  readonly now: string;
  /**
   * `overflow`: the provider just rejected this context as too long; the flush runs only when the
   * context fits the learned window (no tail-only flush on the way to an urgent compaction).
   */
  readonly purpose?: 'soft-threshold' | 'compaction' | 'overflow';
}

export type MemoryFlushSkip =
  | 'disabled'
  | 'already-flushed-this-cycle'
  | 'workspace-read-only'
  | 'no-workspace-access'
  | 'no-model'
  | 'does-not-fit';

export interface MemoryFlushResult {
  readonly ran: boolean;
  readonly skipped?: MemoryFlushSkip;
  readonly notes: number;
  /** The flush saw only the recent tail: the whole context did not fit the model. */
  readonly tailOnly?: boolean;
}

export interface MemoryFlushFailureInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly error: string;
  readonly now: string;
}

/** Tokens of the memory_write and memory_checkpoint tool definitions sent with the flush (generous). */
const FLUSH_TOOL_TOKENS = 500;

/** Model rounds the silent flush turn may take (it writes notes through tool calls, then stops). */
const MAX_FLUSH_ROUNDS = 3;

/**
 * The pre-compaction memory flush: one silent turn, once per compaction cycle, that asks the agent to
 * write durable notes through `memory_write`. Its reply (normally NO_REPLY) is never delivered, and
 * the flush turn itself is not added to the conversation; an audit entry records that it ran.
 * `replies`: the worker's memo of replies received and not stored yet; a retry after a failed write
 * replays the rounds from it instead of calling the model again.
 */
export function createMemoryActivities(allDeps: ActivityDeps, replies = new ReceivedReplies()) {
  const ctx: MemoryActivityContext = { allDeps, db: allDeps.db, replies };
  return {
    memoryFlush: (input: MemoryFlushInput) => memoryFlush(ctx, input),
    recordFlushFailure: (input: MemoryFlushFailureInput) => recordFlushFailure(ctx, input),
  };
}

/** What the memory activities of a worker share: its deps, and its memo of replies received and not stored yet. */
interface MemoryActivityContext {
  readonly allDeps: ActivityDeps;
  readonly db: ActivityDeps['db'];
  readonly replies: ReceivedReplies;
}

/** The flush, with one `memory_flush` line and count for what it did. */
async function memoryFlush(ctx: MemoryActivityContext, input: MemoryFlushInput): Promise<MemoryFlushResult> {
  const startedAt = performance.now();
  const r = await runMemoryFlush(ctx, input);
  ctx.allDeps.metrics?.memoryFlush(r.ran ? 'ran' : 'skipped');
  log.info('memory_flush', {
    event: 'memory_flush',
    outcome: r.ran ? 'ran' : 'skipped',
    purpose: input.purpose,
    notes: r.notes,
    ...(r.skipped ? { skipped: r.skipped } : {}),
    ...(r.tailOnly ? { tailOnly: true } : {}),
    durationMs: Math.round(performance.now() - startedAt),
  });
  return r;
}

async function runMemoryFlush(ctx: MemoryActivityContext, input: MemoryFlushInput): Promise<MemoryFlushResult> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const done = await getEntry(ctx.db, input.agentId, input.sessionId, input.flushId);
  if (done) {
    ctx.replies.forget(input.flushId);
    return {
      ran: true,
      notes: Number(
        (done.type === 'custom' ? (done.payload.data as { notes?: number } | undefined) : undefined)?.notes ?? 0,
      ),
    };
  }
  // Turned off (memoryFlush.enabled): compactions go on without it.
  if (!deps.config.memoryFlushEnabled) return { ran: false, skipped: 'disabled', notes: 0 };
  const session = await getSession(ctx.db, input.agentId, input.sessionKey);
  const cycle = session?.compaction_count ?? 0;
  if (session?.memory_flush_compaction_count === cycle)
    return { ran: false, skipped: 'already-flushed-this-cycle', notes: 0 };

  // Without a model Keel still compacts (extractively); there is no agent to write notes.
  if (!modelConfigured(deps.config)) return { ran: false, skipped: 'no-model', notes: 0 };
  // An agent that may not write its workspace has nowhere to keep notes: the cycle counts as flushed.
  const workspace = deps.config.workspaceDir;
  const access = deps.config.workspaceAccess;
  if (access !== 'rw' || (workspace && !(await writable(workspace)))) {
    await recordMemoryFlush(ctx.db, { ...input, cycle, notes: [] });
    return { ran: false, skipped: access === 'none' ? 'no-workspace-access' : 'workspace-read-only', notes: 0 };
  }

  // The flush must fit the model: the turn's budgeted context, or its recent tail when even that is too long.
  // The session's turns' model (its override included) unless a flush model is configured.
  const turnModel = modelOf(deps, session);
  const model = deps.config.memoryFlushModel ?? turnModel;
  const window = await effectiveWindow(deps, model, input);
  // The same system prompt as the turns (the provider's prompt cache holds it), counted against the room.
  const system = await systemPromptForTurn(deps, { ...input, model: turnModel, ...(session ? { session } : {}) });
  const systemTokens =
    system.overhead.systemTokens +
    system.overhead.bootstrapTokens +
    (deps.config.memoryFlushSystemPrompt
      ? deps.estimate({ role: 'user', content: deps.config.memoryFlushSystemPrompt })
      : 0);
  const context = await prepareContext(deps, input.agentId, input.sessionKey, input.sessionId, {
    window,
    overheadTokens: systemTokens,
  });
  const prompt: AgentMessage = { role: 'user', content: deps.config.memoryFlushPrompt ?? MEMORY_FLUSH_PROMPT };
  // The flush's own system text goes last, so the turns' prompt cache still serves the prefix.
  const systemText = deps.config.memoryFlushSystemPrompt
    ? `${system.text}\n\n${deps.config.memoryFlushSystemPrompt}`
    : system.text;
  const maxTokens = maxOutputTokensFor(window, deps.config);
  // The reserve, as a turn keeps it: room for the reply and slack for an estimate that falls short.
  const reserve = Math.max(maxTokens, reserveForWindow(window, deps.config));
  const room = window - reserve - deps.estimate(prompt) - FLUSH_TOOL_TOKENS - systemTokens;
  let history = context.messages;
  if (context.estimatedTokens > room) {
    if (input.purpose === 'overflow') return { ran: false, skipped: 'does-not-fit', notes: 0 };
    history = fitRecentTail(context.messages, room, deps.estimate);
    if (history.length === 0) return { ran: false, skipped: 'does-not-fit', notes: 0 };
  }
  const tailOnly = history !== context.messages;
  const sentTokens = history.reduce((sum, m) => sum + deps.estimate(m), deps.estimate(prompt) + systemTokens);
  const written = await askForNotes(ctx, deps, input, {
    model,
    system: systemText,
    messages: [...history, prompt],
    maxTokens,
    sentTokens,
  });
  await recordFlush(ctx, deps, input, { ...written, cycle, tailOnly });
  return { ran: true, notes: written.notes.length, ...(tailOnly ? { tailOnly } : {}) };
}

/** The flush's model rounds: the agent writes notes and a checkpoint through its tools until it replies without calling them. */
async function askForNotes(
  ctx: MemoryActivityContext,
  deps: ActivityDeps,
  input: MemoryFlushInput,
  call: { model: string; system: string; messages: AgentMessage[]; maxTokens: number; sentTokens: number },
): Promise<{ notes: string[]; checkpoint?: MemoryCheckpoint; reply: string }> {
  const { model, messages } = call;
  const notes: string[] = [];
  let checkpoint: MemoryCheckpoint | undefined;
  let reply = '';
  const heartbeat = startHeartbeat();
  try {
    for (let round = 0; round < MAX_FLUSH_ROUNDS; round++) {
      // A round an earlier attempt received is not requested again (the rounds before it replay the same way).
      const part = `round ${round}`;
      const earlier = ctx.replies.get(input.flushId, part)?.reply;
      const response =
        earlier ??
        (await deps.model.complete(
          {
            model,
            system: call.system,
            messages,
            maxTokens: call.maxTokens,
            tools: [MEMORY_WRITE_TOOL, MEMORY_CHECKPOINT_TOOL],
          },
          { signal: Context.current().cancellationSignal },
        ));
      if (earlier)
        log.info('memory flush round received by an earlier attempt; not requested again', {
          flushId: input.flushId,
          round,
        });
      else ctx.replies.keep(input.flushId, part, response);
      const assistant: AssistantMessage = {
        role: 'assistant',
        content: response.content,
        stopReason: response.stopReason,
      };
      const calls = response.content.filter((b): b is ToolCallBlock => isToolCallBlock(b));
      reply = response.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (calls.length === 0) break;
      const written = collectMemoryWrites(calls);
      notes.push(...written.notes);
      checkpoint = written.checkpoint ?? checkpoint;
      messages.push(assistant, ...written.results);
    }
  } catch (err) {
    await learnFromOverflow(deps, model, err, call.sentTokens, input).catch(() => undefined);
    throw toActivityFailure(err);
  } finally {
    heartbeat.stop();
  }
  return { notes, ...(checkpoint ? { checkpoint } : {}), reply };
}

/** Keeps the notes (the database and the workspace file) and the audit entry that says the flush ran. */
async function recordFlush(
  ctx: MemoryActivityContext,
  deps: ActivityDeps,
  input: MemoryFlushInput,
  flush: { notes: string[]; checkpoint?: MemoryCheckpoint; reply: string; cycle: number; tailOnly: boolean },
): Promise<void> {
  const { notes, checkpoint, cycle, tailOnly } = flush;
  const workspace = deps.config.workspaceDir;
  const day = localDate(new Date(input.now), deps.config.userTimeZone);
  // Notes are model output kept for good (the database and the workspace file): redacted like every entry.
  const { value: kept, redactions } = redactSecrets({ notes, checkpoint });
  logRedactions('memory_notes', redactions, { flushId: input.flushId });
  if (workspace && kept.notes.length > 0) await appendWorkspaceNotes(workspace, input.flushId, day, kept.notes);
  const [last] = await tailEntries(ctx.db, input.agentId, input.sessionId, 1);
  const audit: CustomEntry = {
    type: 'custom',
    id: input.flushId,
    parentId: last?.id ?? null,
    timestamp: input.now,
    customType: 'memory_flush',
    data: {
      notes: notes.length,
      checkpoint: checkpoint !== undefined,
      cycle,
      silent: isSilentReply(flush.reply),
      ...(tailOnly ? { tailOnly } : {}),
    },
  };
  await recordMemoryFlush(ctx.db, {
    ...input,
    cycle,
    notes: kept.notes,
    day,
    ...(kept.checkpoint ? { checkpoint: kept.checkpoint } : {}),
  });
  await appendEntriesRedacted(ctx.db, input.agentId, input.sessionId, [{ entry: audit, tokenEstimate: null }]);
  ctx.replies.forget(input.flushId);
}

/** Records on the session that the flush failed (the workflow goes on without it). */
async function recordFlushFailure(ctx: MemoryActivityContext, input: MemoryFlushFailureInput): Promise<void> {
  // A provider's error can quote what it was sent: stored redacted like everything else.
  await recordMemoryFlushFailure(ctx.db, input.agentId, input.sessionKey, redactSecrets(input.error).value, input.now);
  ctx.allDeps.metrics?.memoryFlush('failed');
  log.warn('memory_flush', { event: 'memory_flush', outcome: 'failed', error: input.error });
}

async function writable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Appends to `memory/<day>.md` once per flush (day in the user's time zone): the flush id marks what was already written. */
async function appendWorkspaceNotes(workspace: string, flushId: string, day: string, notes: string[]): Promise<void> {
  const dir = join(workspace, 'memory');
  const file = join(dir, `${day}.md`);
  const marker = `<!-- keel memory flush ${flushId} -->`;
  const existing = await readFile(file, 'utf8').catch(() => '');
  if (existing.includes(marker)) return;
  await mkdir(dir, { recursive: true });
  await appendFile(file, `\n${marker}\n${notes.map((n) => `- ${n.replace(/\n+/g, ' ')}`).join('\n')}\n`);
}
