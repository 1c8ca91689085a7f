import type { KeelConfig } from './keel-config';
import { resolveContextWindowTokens, type ContextWindow } from '../context/context-window';

/**
 * The configured context window of `model` for one agent, in OpenClaw's order: the per-provider
 * model entry of `models.providers` → the catalog (Keel ships none) → the agent's `contextTokens`
 * cap → the default (`contextWindowTokens`, 200,000 unless set). A window the provider taught Keel
 * (a learned limit) may lower it further at run time.
 *
 * @example configuredWindow({ ...config, contextTokens: 100_000 }, 'claude-sonnet-4-6') // { tokens: 100_000, source: 'agentContextTokens' }
 */
export function configuredWindow(config: KeelConfig, model: string = config.model): ContextWindow {
  // The summarizer may sit at another provider than the chat model.
  const provider =
    model === config.compactionModel && model !== config.model ? config.compactionModelProvider : config.modelProvider;
  return resolveContextWindowTokens({
    provider,
    model,
    ...(config.models ? { config: { models: config.models } } : {}),
    ...(config.contextTokens !== undefined ? { agentContextTokens: config.contextTokens } : {}),
    defaultTokens: config.contextWindowTokens,
  });
}
