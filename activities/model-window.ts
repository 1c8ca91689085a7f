import { log } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { getLearnedWindow, learnWindow } from '../src/store/model-limits-repo';
import { classifyModelError, ContextOverflowError } from '../src/model/errors';
import { windowFromOverflow } from '../src/context/learned-window';
import { configuredWindow } from '../src/config/configured-window';

/** The window Keel uses for `model`: the one the agent's config resolves, lowered by what the provider taught it. */
export async function effectiveWindow(deps: ActivityDeps, model: string): Promise<number> {
  return windowInForce(deps, model, await getLearnedWindow(deps.db, model));
}

/** The window in force for `model` given what was learned for it (undefined: nothing). */
export function windowInForce(deps: ActivityDeps, model: string, learned: number | undefined): number {
  const configured = configuredWindow(deps.config, model).tokens;
  return learned === undefined ? configured : Math.min(learned, configured);
}

/**
 * When `err` is the provider's "prompt is too long", lowers the model's learned window (persisted, shared
 * by every worker and session) and returns the window now in force; undefined for any other error.
 */
export async function learnFromOverflow(deps: ActivityDeps, model: string, err: unknown, estimatedPromptTokens: number): Promise<number | undefined> {
  const modelError = classifyModelError(err);
  if (!(modelError instanceof ContextOverflowError)) return undefined;
  const currentWindow = await effectiveWindow(deps, model);
  const window = windowFromOverflow({
    ...(modelError.maxTokens !== undefined ? { providerMaxTokens: modelError.maxTokens } : {}),
    ...(modelError.promptTokens !== undefined ? { providerPromptTokens: modelError.promptTokens } : {}),
    estimatedPromptTokens,
    currentWindow,
  });
  const inForce = await learnWindow(deps.db, {
    model,
    contextWindow: window,
    providerMaxTokens: modelError.maxTokens ?? null,
    providerMessage: modelError.providerMessage ?? null,
    now: new Date(),
  });
  log.warn('provider rejected the prompt as too long; learned a smaller window', { model, estimatedPromptTokens, providerMaxTokens: modelError.maxTokens, window: inForce });
  return inForce;
}
