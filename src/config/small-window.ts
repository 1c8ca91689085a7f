import type { KeelConfig } from './keel-config';
import type { PromptMode } from '../context/system-prompt';
import { configuredWindow } from './configured-window';

/**
 * A small local model's window (`smallWindowTokens`, 0: never): the full system prompt and the
 * subagent tools alone would take about half of a 4,000-token window, leaving no room for the
 * conversation, so such an agent runs lean. Judged on the configured window of the agent's model.
 */
function hasSmallWindow(config: KeelConfig, model: string): boolean {
  return config.smallWindowTokens > 0 && configuredWindow(config, model).tokens <= config.smallWindowTokens;
}

/**
 * The system prompt mode of the agent's main sessions: the configured one, except that `full`
 * becomes `minimal` on a small window (its tooling, workspace and runtime sections stay).
 *
 * @example mainPromptMode({ ...config, contextWindowTokens: 4_000 }) // 'minimal'
 */
export function mainPromptMode(config: KeelConfig, model: string = config.model): PromptMode {
  return config.promptMode === 'full' && hasSmallWindow(config, model) ? 'minimal' : config.promptMode;
}

/** Whether the agent gets the subagent tools: it may spawn (`subagentMaxDepth` > 0), and its window is not small. */
export function offersSubagentTools(config: KeelConfig): boolean {
  return config.subagentMaxDepth > 0 && !hasSmallWindow(config, config.model);
}
