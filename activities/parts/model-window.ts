import { log } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import {
  getLearnedWindow,
  getWindowReadings,
  learnWindow,
  lowerSessionEstimateScale,
  raiseSessionEstimateScale,
} from '../../src/store/model-limits-repo';
import { classifyModelError, ContextOverflowError } from '../../src/model/errors';
import { scaleAfterReading, windowFromOverflow, windowInForceOf } from '../../src/context/learned-window';
import type { ModelResponse } from '../../src/model/model-client';
import { configuredWindow } from '../../src/config/configured-window';

/** The session a window is for: its own estimate scale applies (see `OverflowLesson.sessionScale`). */
export interface WindowSession {
  readonly agentId: string;
  readonly sessionKey: string;
}

/**
 * The window Keel uses for `model`: the one the agent's config resolves, lowered by what the provider
 * taught it, and for a session, scaled by how far Keel's estimate fell short on its content.
 */
export async function effectiveWindow(deps: ActivityDeps, model: string, session?: WindowSession): Promise<number> {
  if (!session) return windowInForce(deps, model, await getLearnedWindow(deps.db, model));
  const { learnedWindow, estimateScale } = await getWindowReadings(deps.db, model, session);
  return windowInForce(deps, model, learnedWindow, estimateScale);
}

/** The window in force for `model` given what was learned for it (undefined: nothing) and the session's estimate scale. */
export function windowInForce(
  deps: ActivityDeps,
  model: string,
  learned: number | undefined,
  estimateScale?: number | null,
): number {
  return windowInForceOf(configuredWindow(deps.config, model).tokens, learned, estimateScale);
}

/**
 * When `err` is the provider's "prompt is too long", lowers the model's learned window (persisted, shared
 * by every worker and session) to the provider's stated maximum, and the session's estimate scale when
 * Keel's estimate of the prompt fell short of the provider's count. Returns the window now in force
 * (the session's, when one is named); undefined for any other error.
 */
export async function learnFromOverflow(
  deps: ActivityDeps,
  model: string,
  err: unknown,
  estimatedPromptTokens: number,
  session?: WindowSession,
): Promise<number | undefined> {
  const modelError = classifyModelError(err);
  if (!(modelError instanceof ContextOverflowError)) return undefined;
  const lesson = windowFromOverflow({
    ...(modelError.maxTokens !== undefined ? { providerMaxTokens: modelError.maxTokens } : {}),
    ...(modelError.promptTokens !== undefined ? { providerPromptTokens: modelError.promptTokens } : {}),
    estimatedPromptTokens,
    currentWindow: await effectiveWindow(deps, model),
  });
  const modelWindow = await learnWindow(deps.db, {
    model,
    contextWindow: lesson.modelWindow,
    providerMaxTokens: modelError.maxTokens ?? null,
    providerMessage: modelError.providerMessage ?? null,
    now: new Date(),
  });
  // The session's scale as it is now: lowered by this reading, or as an earlier one left it.
  const scale = !session
    ? undefined
    : lesson.sessionScale !== undefined
      ? await lowerSessionEstimateScale(deps.db, { ...session, model, scale: lesson.sessionScale })
      : (await getWindowReadings(deps.db, model, session)).estimateScale;
  const inForce = windowInForce(deps, model, modelWindow, scale);
  log.warn('provider rejected the prompt as too long; learned a smaller window', {
    model,
    estimatedPromptTokens,
    providerPromptTokens: modelError.promptTokens,
    providerMaxTokens: modelError.maxTokens,
    modelWindow,
    ...(scale !== undefined ? { sessionKey: session?.sessionKey, estimateScale: Number(scale.toFixed(3)) } : {}),
    window: inForce,
  });
  return inForce;
}

/**
 * After a successful call of a session whose estimate once fell short: when the provider's count of
 * this prompt shows the content lighter now, raises the session's scale (or clears it), so a session
 * that compacted its identifiers away gets its window back instead of compacting early until a reset.
 * A call whose prompt the provider edited (cleared tool results) counts less than Keel sent: no reading.
 * Returns the session's window now in force when the scale rose; undefined when nothing changed.
 */
export async function learnFromUsage(
  deps: ActivityDeps,
  session: WindowSession & { readonly model: string; readonly sessionId: string; readonly estimateScale: number },
  call: {
    readonly estimatedPromptTokens: number;
    readonly budget: number;
    readonly reply: Pick<ModelResponse, 'usage' | 'appliedEdits'>;
  },
): Promise<number | undefined> {
  // Keel's own count is no reading of the provider's tokenizer.
  if (call.reply.appliedEdits?.length || call.reply.usage.estimated) return undefined;
  const { usage } = call.reply;
  const providerPromptTokens = usage.input + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
  const scale = scaleAfterReading({
    estimatedPromptTokens: call.estimatedPromptTokens,
    providerPromptTokens,
    budget: call.budget,
    scale: session.estimateScale,
  });
  if (scale === undefined) return undefined;
  const raised = await raiseSessionEstimateScale(deps.db, {
    agentId: session.agentId,
    sessionKey: session.sessionKey,
    sessionId: session.sessionId,
    model: session.model,
    scale,
  });
  if (!raised) return undefined;
  const window = windowInForce(deps, session.model, await getLearnedWindow(deps.db, session.model), scale);
  log.info("the session's content counts lighter than its estimate scale assumed; raised the scale", {
    sessionKey: session.sessionKey,
    estimatedPromptTokens: call.estimatedPromptTokens,
    providerPromptTokens,
    estimateScale: scale,
    was: session.estimateScale,
    window,
  });
  return window;
}
