/**
 * The system prompt of one model call (turn or memory flush): the sections of the session's prompt
 * mode, the workspace's bootstrap files from the workspace cache, the spawn policy at the session's
 * context level, and what the last compaction's flush saved. Also counts what the prompt and the
 * tool definitions take from the context budget (prepare-model-call.ts budgets the context with it).
 */
import type { ActivityDeps } from '../../src/runtime/deps';
import { buildSystemPrompt, type PromptMode } from '../../src/context/system-prompt';
import { BOOTSTRAP_FILE_NAMES, buildBootstrapContext } from '../../src/context/bootstrap';
import {
  MEMORY_RECALL,
  MESSAGING,
  SAFETY,
  TOOL_CALL_STYLE,
  dailyLogPaths,
  postCompactionMemory,
  promptModeFor,
  runtimeSection,
} from '../../src/context/prompt-sections';
import { getSession } from '../../src/store/sessions-repo';
import type { SessionRow } from '../../src/store/schema';
import { currentCheckpoint, flushNotesDay } from '../../src/store/memory-repo';
import { readWorkspaceFiles, type WorkspaceWatchSettings } from './workspace-cache';
import { workspaceSpawnPolicy } from './context-policy';
import { effectiveWindow } from './model-window';
import { spawnLevel, spawnPolicySection } from '../../src/context/spawn-policy';
import type { AgentTaskScope } from '../../src/protocol';
import type { ModelTool } from '../../src/model/model-client';
import type { ToolRegistry } from '../../src/tools/registry';
import { toolsForSession, toolsForTask } from './session-tools';
import { mainPromptMode } from '../../src/config/small-window';

/** Token counts of what a call sends besides the conversation (status shows them; never the text). */
export interface PromptOverhead {
  /** The system prompt without the workspace files. */
  readonly systemTokens: number;
  /** The workspace (bootstrap) files inside the system prompt. */
  readonly bootstrapTokens: number;
  /** The tool definitions. */
  readonly toolTokens: number;
}

export interface TurnSystemPrompt {
  /** The prompt without the context engine's addition (which comes at the end, after assembly). */
  readonly text: string;
  readonly mode: PromptMode;
  readonly overhead: PromptOverhead;
  /** The tool definitions a turn's call in this session sends (the prompt's Tooling section names them). */
  readonly tools: readonly ModelTool[];
}

/** Whom a call is for; `session` is the row when the caller has just read it (saves reading it again). */
export interface PromptInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly now: string;
  readonly model?: string;
  readonly session?: SessionRow | undefined;
  /** The model's window in force, when the caller has read it (a turn's context); else the spawn policy reads it. */
  readonly window?: number;
  /** An application's agent task: its prompt mode and the tools it may use. */
  readonly task?: AgentTaskScope;
  /** Rebuild the call that wrote this entry: its context is the window before it. */
  readonly beforeEntryId?: string;
}

/** Builds the system prompt for a call in `sessionKey` at workflow time `now`. */
export async function systemPromptForTurn(deps: ActivityDeps, input: PromptInput): Promise<TurnSystemPrompt> {
  const { config } = deps;
  const now = new Date(input.now);
  const mode =
    input.task?.promptMode ?? promptModeFor(input.sessionKey, mainPromptMode(config, input.model ?? config.model));
  const registry = toolsForTask(
    await toolsForSession(deps, input.agentId, input.sessionKey),
    input.task?.tools,
    config.taskQueue,
  );
  const tools = registry.list();
  const workspace = config.workspaceAccess === 'none' ? undefined : config.workspaceDir;
  const watchSettings = { watch: config.workspaceWatch, pollSeconds: config.workspacePollSeconds };
  const bootstrap =
    workspace && mode !== 'none'
      ? buildBootstrapContext(
          await readWorkspaceFiles(
            workspace,
            [...BOOTSTRAP_FILE_NAMES, ...dailyLogPaths(now, config.userTimeZone)],
            watchSettings,
          ),
        )
      : undefined;
  const session =
    mode === 'none' ? undefined : (input.session ?? (await getSession(deps.db, input.agentId, input.sessionKey)));
  // The spawn policy only means something to an agent that can spawn, and only the main conversation gets it.
  const spawnPolicy =
    mode === 'full' && tools.some((t) => t.name === SPAWN_TOOL)
      ? await spawnPolicyText(deps, {
          workspace,
          watchSettings,
          session,
          agentId: input.agentId,
          sessionKey: input.sessionKey,
          model: input.model ?? config.model,
          sessionId: input.sessionId,
          ...(input.window !== undefined ? { window: input.window } : {}),
        })
      : undefined;
  const text = buildSystemPrompt(mode, {
    ...(config.identity ? { identity: config.identity } : {}),
    tools: tools.map((t) => ({ name: t.name, description: t.description })),
    toolCallStyle: TOOL_CALL_STYLE,
    safety: SAFETY,
    memory: MEMORY_RECALL,
    messaging: spawnPolicy ? `${MESSAGING}\n\n${spawnPolicy}` : MESSAGING,
    ...(workspace
      ? {
          workspace: `Workspace folder: ${workspace} (${config.workspaceAccess === 'ro' ? 'read-only' : 'read-write'})`,
        }
      : {}),
    ...(bootstrap ? { bootstrap: bootstrap.text } : {}),
    afterCompaction: session ? await afterCompaction(deps, input, session, workspace !== undefined) : '',
    runtime: runtimeSection(input.model ?? config.model, now, config.userTimeZone),
  });
  const tokens = (t: string) => (t === '' ? 0 : promptTokens(deps, t));
  const bootstrapTokens = bootstrap ? tokens(bootstrap.text) : 0;
  const toolTokens = toolDefinitionTokens(deps, registry);
  return {
    text,
    mode,
    overhead: { systemTokens: Math.max(0, tokens(text) - bootstrapTokens), bootstrapTokens, toolTokens },
    tools: registry.modelTools(),
  };
}

/** The built-in tool that starts a subagent. */
const SPAWN_TOOL = 'sessions_spawn';

/**
 * The spawn policy with the instruction of the level the context reached at the end of the last
 * turn (the same for every call of a turn, so the prompt only changes when the level does).
 */
async function spawnPolicyText(
  deps: ActivityDeps,
  input: {
    workspace: string | undefined;
    watchSettings: WorkspaceWatchSettings;
    session: SessionRow | undefined;
    agentId: string;
    sessionKey: string;
    model: string;
    sessionId: string;
    window?: number;
  },
): Promise<string> {
  const policy = await workspaceSpawnPolicy(input.workspace, input.watchSettings);
  const contextTokens = input.session?.session_id === input.sessionId ? Number(input.session.context_tokens) : 0;
  const window = input.window ?? (await effectiveWindow(deps, input.model, input));
  return spawnPolicySection(policy, spawnLevel(window > 0 ? (contextTokens / window) * 100 : 0, policy));
}

/** The checkpoint and notes the flush saved before the compaction this session last went through. */
async function afterCompaction(
  deps: ActivityDeps,
  input: PromptInput,
  session: SessionRow,
  notesInWorkspace: boolean,
): Promise<string> {
  if (session.session_id !== input.sessionId || session.compaction_count === 0) return '';
  const compactionCount = session.compaction_count;
  const [checkpoint, notesDay] = await Promise.all([
    currentCheckpoint(deps.db, { ...input, compactionCount }),
    flushNotesDay(deps.db, { ...input, cycle: compactionCount - 1 }),
  ]);
  return postCompactionMemory({
    ...(checkpoint ? { checkpoint } : {}),
    ...(notesDay ? { notesDay } : {}),
    notesInWorkspace,
  });
}

/**
 * Tokens of a system prompt (or its workspace part). The prompt is byte-identical call after call
 * (it names the date, not the time), so the last few counts are kept per estimator.
 */
const promptTokenCounts = new WeakMap<ActivityDeps['estimate'], Map<string, number>>();
const PROMPT_COUNTS_KEPT = 64;
function promptTokens(deps: ActivityDeps, text: string): number {
  let counts = promptTokenCounts.get(deps.estimate);
  if (!counts) promptTokenCounts.set(deps.estimate, (counts = new Map()));
  let n = counts.get(text);
  if (n === undefined) {
    n = deps.estimate({ role: 'user', content: text });
    if (counts.size >= PROMPT_COUNTS_KEPT) counts.delete(counts.keys().next().value as string);
    counts.set(text, n);
  }
  return n;
}

/**
 * Tokens of the tool definitions a call sends. The registry hands out the same list until a tool is
 * registered, so the count is kept per list instead of re-tokenizing every schema on every call.
 */
const toolTokensByList = new WeakMap<readonly unknown[], number>();
function toolDefinitionTokens(deps: ActivityDeps, tools: ToolRegistry): number {
  const list = tools.modelTools();
  let count = toolTokensByList.get(list);
  if (count === undefined) {
    count = list.reduce((sum, t) => sum + deps.estimate({ role: 'user', content: JSON.stringify(t) }), 0);
    toolTokensByList.set(list, count);
  }
  return count;
}
