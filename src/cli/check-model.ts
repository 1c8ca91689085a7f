import type { KeelConfig } from '../config/keel-config';
import { modelFromConfig } from '../runtime/activity-deps';

/** How long `keel dev --check` waits for the model's answer to its one request. */
const CHECK_TIMEOUT_MS = 30_000;

/**
 * Makes one real, minimal request to the agent's chat model (one word in, at most one token out)
 * and returns undefined when it answered, else the failure in one line: what `keel dev --check`
 * reports, so an unreachable address or a wrong key shows before a chat is started.
 */
export async function checkModel(config: KeelConfig): Promise<string | undefined> {
  const request = { model: config.model, messages: [{ role: 'user' as const, content: 'ping' }], maxTokens: 1 };
  try {
    await modelFromConfig(config).complete(request, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    return undefined;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).split('\n')[0];
  }
}
