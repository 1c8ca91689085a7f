import type { ActivityDeps } from '../../src/runtime/deps';
import { configFromEnv, type KeelConfig } from '../../src/config/keel-config';
import { boundedEstimate } from '../../src/runtime/bounded-estimate';
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import { modelFromConfig } from '../../src/runtime/activity-deps';
import type { Store } from '../../src/store/connect';
import { ToolRegistry } from '../../src/tools/registry';

/** Activity dependencies for an in-process worker: the real store, the real SDK pointed at the fake. */
export function testDeps(
  store: Store,
  fakeUrl: string,
  opts: { tools?: ToolRegistry; config?: Partial<KeelConfig> } = {},
): ActivityDeps {
  // No daily reset in tests: a run crossing 04:00 UTC must not rotate sessions mid-test (reset tests opt in).
  // Compaction waits for the threshold, as the suites written for it expect; background compaction's suite opts in.
  const config = configFromEnv(
    {},
    {
      anthropicBaseUrl: fakeUrl,
      anthropicApiKey: 'test-key',
      resetMode: 'none',
      backgroundCompactionShare: 0,
      ...opts.config,
    },
  );
  return {
    db: store.db,
    // An OpenAI-compatible agent gets its client as a worker builds it, from its config.
    model:
      config.modelProvider === 'openai-compatible'
        ? modelFromConfig(config)
        : new AnthropicModelClient({ apiKey: 'test-key', baseURL: fakeUrl, idleTimeoutMs: config.modelIdleTimeoutMs }),
    config,
    tools: opts.tools ?? new ToolRegistry(),
    estimate: boundedEstimate,
  };
}
