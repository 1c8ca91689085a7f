/**
 * What a turn's activity has already read, built once and handed to every step that needs it: the
 * session row, the model its turns call and that model's window in force. Steps take this object
 * instead of optional "already known" values, so no step reads them again or reads them differently.
 */
import { depsForAgent, type ActivityDeps } from '../../src/runtime/deps';
import type { SessionRow } from '../../src/store/schema';
import { getSession } from '../../src/store/sessions-repo';
import { estimateScaleFor, getLearnedWindow } from '../../src/store/model-limits-repo';
import { modelOf } from './session-model';
import { windowInForce } from './model-window';
import { storedThinkingLevel, type ThinkingLevel } from '../../src/turn/thinking-level';

export interface TurnContext {
  readonly agentId: string;
  /** The deps of the session's agent. */
  readonly deps: ActivityDeps;
  /** The worker's metrics (the worker's deps carry them, not an agent's). */
  readonly metrics: ActivityDeps['metrics'];
  /** The session row as this activity read it (absent only for a session that does not exist). */
  readonly session: SessionRow | undefined;
  /** The model the session's turns call (its override, else the agent's). */
  readonly model: string;
  /** The model's window in force for this session: configured, lowered by a learned limit, scaled by the session's estimate scale. */
  readonly window: number;
  /** How hard the session's turns think: its own level (`/think`, or OpenClaw's imported toggle), else its agent's. */
  readonly thinking: ThinkingLevel;
  /** This attempt has just appended the user's message: no reply of the turn can be stored yet. */
  readonly replyAbsent: boolean;
}

/**
 * The context from a session row and its model's learned window, both just read; `workerDeps` are
 * the worker's (an agent's deps are found from them).
 * @example turnContext(workerDeps, 'main', row, learnedWindow, { replyAbsent: appended })
 */
export function turnContext(
  workerDeps: ActivityDeps,
  agentId: string,
  session: SessionRow | undefined,
  learnedWindow: number | undefined,
  opts: { replyAbsent: boolean },
): TurnContext {
  const deps = depsForAgent(workerDeps, agentId);
  const model = modelOf(deps, session);
  const window = windowInForce(deps, model, learnedWindow, estimateScaleFor(session, model));
  const thinking = storedThinkingLevel(session?.toggles.thinkingLevel) ?? deps.config.thinkingLevel;
  return {
    agentId,
    deps,
    metrics: workerDeps.metrics,
    session,
    model,
    window,
    thinking,
    replyAbsent: opts.replyAbsent,
  };
}

/** Reads the context of a model call that follows other steps of its turn: the session row, then its model's learned window. */
export async function readTurnContext(
  workerDeps: ActivityDeps,
  session: { readonly agentId: string; readonly sessionKey: string },
): Promise<TurnContext> {
  const row = await getSession(workerDeps.db, session.agentId, session.sessionKey);
  const learned = await getLearnedWindow(workerDeps.db, modelOf(depsForAgent(workerDeps, session.agentId), row));
  return turnContext(workerDeps, session.agentId, row, learned, { replyAbsent: false });
}
