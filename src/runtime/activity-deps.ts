import { resolve } from 'node:path';
import type { ActivityDeps } from './deps';
import type { KeelConfig } from '../config/keel-config';
import { boundedEstimate } from './bounded-estimate';
import { AnthropicModelClient } from '../model/anthropic-client';
import type { ModelClient } from '../model/model-client';
import { OpenAiCompatibleModelClient } from '../model/openai-compatible-client';
import { openStore, storeTargetFor, type Store } from '../store/connect';
import { ToolRegistry } from '../tools/registry';

/** A module the embedding application points Keel at to register its tools. */
export interface ToolsModule {
  registerTools(registry: ToolRegistry): void | Promise<void>;
}

export interface Runtime {
  readonly store: Store;
  readonly deps: ActivityDeps;
  close(): Promise<void>;
}

export interface OpenRuntimeOptions {
  readonly config: KeelConfig;
  /** Overrides the model built from config (tests pass one pointed at the fake server). */
  readonly model?: ModelClient;
  readonly tools?: ToolRegistry;
  /** Path of a module exporting `registerTools(registry)` (env KEEL_TOOLS_MODULE). */
  readonly toolsModule?: string;
  /** An already open store (tests share one database across workers). */
  readonly store?: Store;
}

/** Opens the store (migrating it), builds the model client and the tool registry. */
export async function openRuntime(opts: OpenRuntimeOptions): Promise<Runtime> {
  const { config } = opts;
  const store =
    opts.store ??
    (await openStore(storeTargetFor(config)));
  const tools = opts.tools ?? new ToolRegistry();
  if (opts.toolsModule) {
    const mod = (await import(resolve(opts.toolsModule))) as ToolsModule;
    await mod.registerTools(tools);
  }
  const model = opts.model ?? modelFromConfig(config);
  const compactionModel = config.compactionModelUrl
    ? new OpenAiCompatibleModelClient({
        baseUrl: config.compactionModelUrl,
        idleTimeoutMs: config.modelIdleTimeoutMs,
        ...(config.compactionModel ? { model: config.compactionModel } : {}),
      })
    : undefined;
  const deps: ActivityDeps = { db: store.db, model, config, tools, estimate: boundedEstimate, ...(compactionModel ? { compactionModel } : {}) };
  return {
    store,
    deps,
    close: async () => {
      if (!opts.store) await store.close();
    },
  };
}

/** True when Keel can reach a model: an API key, or a compatible server named by ANTHROPIC_BASE_URL. */
export function modelConfigured(config: KeelConfig): boolean {
  return Boolean(config.anthropicApiKey || config.anthropicBaseUrl);
}

function modelFromConfig(config: KeelConfig): ModelClient {
  return new AnthropicModelClient({
    // A compatible local server needs no key; the SDK still wants a non-empty string.
    apiKey: config.anthropicApiKey ?? 'no-key-set',
    idleTimeoutMs: config.modelIdleTimeoutMs,
    ...(config.anthropicBaseUrl ? { baseURL: config.anthropicBaseUrl } : {}),
  });
}
