/**
 * Per-agent configuration: each `agents.<agentId>` section of the config file merged over the
 * defaults (the file's top level under the environment). An agent without a section gets the defaults.
 */
import { configFromEnv, ConfigError, keelConfigSchema, type KeelConfig } from './keel-config';
import { readConfigFile, type ConfigSection } from './config-file';
import { configuredWindow } from './configured-window';
import type { ContextWindowSource } from '../context/context-window';

/** The defaults and every configured agent's merged config. */
export interface KeelSettings {
  readonly defaults: KeelConfig;
  /** Configured agents by id, each its section merged over the defaults. */
  readonly agents: ReadonlyMap<string, KeelConfig>;
  /** The config file read, when there was one. */
  readonly file?: string;
}

export interface LoadSettingsOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Set in code; above the environment and the file's top level (agent sections still override them). */
  readonly overrides?: Partial<KeelConfig>;
}

/**
 * Reads the config file (if any) and the environment: environment variables override the file's
 * top-level values; each agent section overrides those. Throws ConfigError naming the variable or
 * the file's JSON path of every bad setting.
 */
export function loadKeelSettings(opts: LoadSettingsOptions = {}): KeelSettings {
  const env = opts.env ?? process.env;
  const file = readConfigFile(env, opts.cwd ?? process.cwd());
  const defaults = configFromEnv(env, opts.overrides ?? {}, file?.defaults);
  const agents = new Map<string, KeelConfig>();
  for (const [id, section] of file?.agents ?? []) agents.set(id, mergeAgent(id, defaults, section, file!.path));
  return { defaults, agents, ...(file ? { file: file.path } : {}) };
}

/** The config one agent runs with: its section over the defaults, or the defaults. */
export function agentConfig(settings: KeelSettings, agentId: string): KeelConfig {
  return settings.agents.get(agentId) ?? settings.defaults;
}

/** An agent's session reset policy (OpenClaw: daily at 04:00, or idle; whichever first), as a turn checks freshness with it. */
export function resetPolicyOf(config: KeelConfig) {
  return {
    mode: config.resetMode,
    dailyResetHour: config.resetHour,
    timeZone: config.resetTimeZone,
    ...(config.idleMinutes !== undefined ? { idleMinutes: config.idleMinutes } : {}),
  };
}

function mergeAgent(agentId: string, defaults: KeelConfig, section: ConfigSection, path: string): KeelConfig {
  const parsed = keelConfigSchema.safeParse({ ...defaults, ...section.values });
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => {
    const [key, ...rest] = i.path.map(String);
    // A value the agent inherits can still clash with what the agent sets (a reserve above its window).
    const name = section.names[key ?? ''] ?? `agents.${agentId} (inherited ${key})`;
    return `  ${[name, ...rest].join('.')}: ${i.message}`;
  });
  throw new ConfigError(`invalid Keel configuration in ${path}:\n${lines.join('\n')}`);
}

/** What `keel agents` shows for one agent: what its settings resolve to. */
export interface AgentSummary {
  readonly agentId: string;
  /** False for the defaults every unlisted agent gets. */
  readonly configured: boolean;
  readonly model: string;
  readonly provider: KeelConfig['modelProvider'];
  /** The endpoint the model is called at (an Anthropic default when unset). */
  readonly endpoint?: string;
  readonly compactionModel?: {
    readonly model: string;
    readonly provider: KeelConfig['compactionModelProvider'];
    readonly endpoint?: string;
  };
  readonly contextWindow: { readonly tokens: number; readonly source: ContextWindowSource };
  readonly reserveTokens: number;
  readonly softThresholdTokens: number;
  readonly workspace?: string;
  readonly workspaceAccess: KeelConfig['workspaceAccess'];
  readonly toolsModule?: string;
  readonly contextEngine: string;
  readonly contextEngineOptions?: Record<string, unknown>;
  /** The work-style preset the config chose (its values are in reserveTokens and contextEngineOptions). */
  readonly workStyle?: KeelConfig['workStyle'];
  readonly promptMode: KeelConfig['promptMode'];
  readonly identity?: string;
  readonly reset: {
    readonly mode: KeelConfig['resetMode'];
    readonly atHour: number;
    readonly timeZone: string;
    readonly idleMinutes?: number;
  };
}

/** Every configured agent, then the defaults (`*`) that any other agent id gets. Keys never appear. */
export function describeAgents(settings: KeelSettings): AgentSummary[] {
  return [
    ...[...settings.agents].map(([id, config]) => summarize(id, config, true)),
    summarize('*', settings.defaults, false),
  ];
}

function summarize(agentId: string, c: KeelConfig, configured: boolean): AgentSummary {
  const endpoint = c.modelProvider === 'openai-compatible' ? c.openAiBaseUrl : c.anthropicBaseUrl;
  return {
    agentId,
    configured,
    model: c.model,
    provider: c.modelProvider,
    ...(endpoint ? { endpoint } : {}),
    ...(c.compactionModel
      ? {
          compactionModel: {
            model: c.compactionModel,
            provider: c.compactionModelProvider,
            ...(c.compactionModelUrl ? { endpoint: c.compactionModelUrl } : {}),
          },
        }
      : {}),
    contextWindow: configuredWindow(c),
    reserveTokens: c.reserveTokens,
    softThresholdTokens: c.softThresholdTokens,
    ...(c.workspaceDir ? { workspace: c.workspaceDir } : {}),
    workspaceAccess: c.workspaceAccess,
    ...(c.toolsModule ? { toolsModule: c.toolsModule } : {}),
    contextEngine: c.contextEngine,
    ...(c.contextEngineOptions ? { contextEngineOptions: c.contextEngineOptions } : {}),
    ...(c.workStyle ? { workStyle: c.workStyle } : {}),
    promptMode: c.promptMode,
    ...(c.identity ? { identity: c.identity } : {}),
    reset: {
      mode: c.resetMode,
      atHour: c.resetHour,
      timeZone: c.resetTimeZone,
      ...(c.idleMinutes !== undefined ? { idleMinutes: c.idleMinutes } : {}),
    },
  };
}
