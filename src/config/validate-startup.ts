import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { KeelConfig } from './keel-config';
import { ConfigError } from './keel-config';

export interface StartupChecks {
  /** Path of the module exporting `registerTools(registry)`; default `config.toolsModule` (KEEL_TOOLS_MODULE). */
  readonly toolsModule?: string;
  /** Configured agents: each agent's own tools module is checked too. */
  readonly agents?: ReadonlyMap<string, KeelConfig>;
  /** A worker cannot run turns without a model; `dev` explains how to set one instead. */
  readonly requireModel: boolean;
}

/**
 * What `configFromEnv` cannot check without I/O, run before a process starts anything: the tools
 * module exists and exports `registerTools`, and a model is configured when one is required. Throws
 * a ConfigError naming the variable, so a bad setting fails at start instead of on every turn.
 */
export async function validateStartup(config: KeelConfig, checks: StartupChecks): Promise<void> {
  const problems: string[] = [];
  const toolsModule = checks.toolsModule ?? config.toolsModule;
  if (toolsModule) {
    const problem = await toolsModuleProblem(toolsModule);
    if (problem) problems.push(`  KEEL_TOOLS_MODULE: ${problem}`);
  }
  for (const [agentId, agent] of checks.agents ?? []) {
    if (!agent.toolsModule || agent.toolsModule === toolsModule) continue;
    const problem = await toolsModuleProblem(agent.toolsModule);
    if (problem) problems.push(`  agents.${agentId}.tools: ${problem}`);
  }
  if (checks.requireModel && !config.anthropicApiKey && !config.anthropicBaseUrl) {
    problems.push(
      '  ANTHROPIC_API_KEY: not set, and neither is ANTHROPIC_BASE_URL; a worker needs a model to run turns',
    );
  }
  if (problems.length > 0) throw new ConfigError(`invalid Keel configuration:\n${problems.join('\n')}`);
}

async function toolsModuleProblem(path: string): Promise<string | undefined> {
  const file = resolve(path);
  if (!existsSync(file) && !existsSync(`${file}.ts`) && !existsSync(`${file}.js`)) return `${file} does not exist`;
  let mod: unknown;
  try {
    mod = await import(file);
  } catch (err) {
    return `${file} failed to load: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (typeof (mod as { registerTools?: unknown }).registerTools !== 'function')
    return `${file} does not export a registerTools(registry) function`;
  return undefined;
}
