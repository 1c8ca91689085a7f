import { resolve } from 'node:path';
import type { ActivityDeps } from './deps';
import { newRecall } from '../embeddings/recall-runtime';
import { startBackgroundEmbedder } from '../embeddings/background-embedder';
import { recallSetting } from '../embeddings/recall-setting';
import type { KeelConfig } from '../config/keel-config';
import { boundedEstimate } from './bounded-estimate';
import { AnthropicModelClient } from '../model/anthropic-client';
import type { ModelClient } from '../model/model-client';
import { OpenAiCompatibleModelClient } from '../model/openai-compatible-client';
import { atRestFor, openStore, storeTargetFor, type Store } from '../store/connect';
import { ToolRegistry } from '../tools/registry';
import { EngineSlots } from '../engine/engine-slots';

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
  /** The defaults: what an agent without a section of its own runs with. */
  readonly config: KeelConfig;
  /** Configured agents, each its config file section merged over the defaults (`loadKeelSettings`). */
  readonly agents?: ReadonlyMap<string, KeelConfig>;
  /** Overrides the defaults' model built from config (tests pass one pointed at the fake server). */
  readonly model?: ModelClient;
  /** The defaults' tools; `config.toolsModule` registers into it. */
  readonly tools?: ToolRegistry;
  /** An already open store (tests share one database across workers). */
  readonly store?: Store;
}

/**
 * Opens the store (migrating it), builds the model clients and tool registries: the defaults', and
 * one set per configured agent, which `deps.forAgent(agentId)` returns (the defaults for any other id).
 */
export async function openRuntime(opts: OpenRuntimeOptions): Promise<Runtime> {
  const { config } = opts;
  const store = opts.store ?? (await openStore(storeTargetFor(config), { atRest: atRestFor(config) }));
  const tools = await loadTools(config.toolsModule, opts.tools ?? new ToolRegistry());
  const recall = newRecall();
  // One instance of each agent's context engine for the runtime's lifetime; closing it disposes their sessions.
  const contextEngines = new EngineSlots();
  const base: ActivityDeps = {
    contextEngines,
    db: store.db,
    config,
    recall,
    tools,
    estimate: boundedEstimate,
    ...modelClients(config, opts.model),
  };
  const perAgent = new Map<string, ActivityDeps>();
  for (const [agentId, agentConfig] of opts.agents ?? []) {
    // An agent naming its own tools module gets its own registry: its tools are unknown to other agents.
    const agentTools =
      agentConfig.toolsModule === config.toolsModule
        ? tools
        : await loadTools(agentConfig.toolsModule, new ToolRegistry());
    perAgent.set(agentId, { ...base, config: agentConfig, tools: agentTools, ...modelClients(agentConfig) });
  }
  const deps: ActivityDeps = { ...base, forAgent: (agentId) => perAgent.get(agentId) ?? base };
  // Entries get their vectors beside the worker, off every turn's path (a no-op for keywords-only agents).
  const hybrid = [base, ...perAgent.values()].some((d) => recallSetting(d.config).mode === 'hybrid');
  const embedder =
    hybrid &&
    startBackgroundEmbedder({
      db: store.db,
      embedders: recall.embedders,
      configFor: (agentId) => (perAgent.get(agentId) ?? base).config,
      log: (line) => process.stderr.write(`keel worker: ${line}\n`),
    });
  return {
    store,
    deps,
    close: async () => {
      if (embedder) await embedder.stop();
      await contextEngines.close();
      if (!opts.store) await store.close();
    },
  };
}

/**
 * True when Keel can reach the chat model: an OpenAI-compatible endpoint, or for Anthropic an API
 * key or a compatible server named by ANTHROPIC_BASE_URL.
 */
export function modelConfigured(config: KeelConfig): boolean {
  if (config.modelProvider === 'openai-compatible') return Boolean(config.openAiBaseUrl);
  return Boolean(config.anthropicApiKey || config.anthropicBaseUrl);
}

async function loadTools(modulePath: string | undefined, registry: ToolRegistry): Promise<ToolRegistry> {
  if (!modulePath) return registry;
  const mod = (await import(resolve(modulePath))) as ToolsModule;
  await mod.registerTools(registry);
  return registry;
}

/**
 * The model compaction summaries come from, as the worker picks it: the separate compaction model
 * when configured, else the chat model; undefined when no model is reachable (summaries are extractive).
 */
export function summarizerModelFor(
  config: KeelConfig,
): { readonly client: ModelClient; readonly model: string } | undefined {
  const compaction = compactionModelFromConfig(config);
  if (compaction) return { client: compaction, model: config.compactionModel ?? config.model };
  return modelConfigured(config) ? { client: modelFromConfig(config), model: config.model } : undefined;
}

/** The chat model's client and, when one is configured, the summarizer's. */
function modelClients(config: KeelConfig, model?: ModelClient): { model: ModelClient; compactionModel?: ModelClient } {
  const compactionModel = compactionModelFromConfig(config);
  return { model: model ?? modelFromConfig(config), ...(compactionModel ? { compactionModel } : {}) };
}

/** The chat model's client as a worker builds it (`keel dev --check` makes one request with it). */
export function modelFromConfig(config: KeelConfig): ModelClient {
  if (config.modelProvider === 'openai-compatible' && config.openAiBaseUrl) {
    return new OpenAiCompatibleModelClient({
      baseUrl: config.openAiBaseUrl,
      idleTimeoutMs: config.modelIdleTimeoutMs,
      ...(config.openAiApiKey ? { apiKey: config.openAiApiKey } : {}),
      ...(config.openAiStreamToolTurns === undefined ? {} : { streamToolTurns: config.openAiStreamToolTurns }),
      ...(config.openAiMaxConcurrentRequests ? { maxConcurrentRequests: config.openAiMaxConcurrentRequests } : {}),
    });
  }
  return anthropicClient(config, config.anthropicApiKey, config.anthropicBaseUrl);
}

function compactionModelFromConfig(config: KeelConfig): ModelClient | undefined {
  if (config.compactionModelProvider === 'anthropic') {
    // A summarizer at Anthropic: its own endpoint and key, else the chat model's.
    if (!config.compactionModel) return undefined;
    const own = config.compactionModelUrl ? { baseURLSetting: 'KEEL_COMPACTION_MODEL_URL' } : {};
    return anthropicClient(
      config,
      config.compactionModelApiKey ?? config.anthropicApiKey,
      config.compactionModelUrl ?? config.anthropicBaseUrl,
      own,
    );
  }
  if (!config.compactionModelUrl) return undefined;
  return new OpenAiCompatibleModelClient({
    baseUrl: config.compactionModelUrl,
    idleTimeoutMs: config.modelIdleTimeoutMs,
    ...(config.compactionModel ? { model: config.compactionModel } : {}),
    ...(config.compactionModelApiKey ? { apiKey: config.compactionModelApiKey } : {}),
  });
}

function anthropicClient(
  config: KeelConfig,
  apiKey: string | undefined,
  baseURL: string | undefined,
  named: { baseURLSetting?: string } = {},
): ModelClient {
  return new AnthropicModelClient({
    // A compatible local server needs no key; the SDK still wants a non-empty string.
    apiKey: apiKey ?? 'no-key-set',
    idleTimeoutMs: config.modelIdleTimeoutMs,
    ...(baseURL ? { baseURL } : {}),
    ...named,
  });
}
