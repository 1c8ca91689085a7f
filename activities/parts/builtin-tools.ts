/**
 * Every agent's built-in tools next to the application's: `memory_search` (OpenClaw's memory recall),
 * the recall tools `history_search` / `history_expand`, and the subagent tools. An application's own tool of the same name wins.
 */
import { depsForAgent, type ActivityDeps } from '../../src/runtime/deps';
import { ToolRegistry } from '../../src/tools/registry';
import { DEFAULTS } from '../../src/config/defaults';
import { memorySearchTool } from './memory-search-tool';
import { historyTools } from './history-tools';
import { subagentTools } from './subagent-tools';
import { offersSubagentTools } from '../../src/config/small-window';

/** Each agent's registry with the built-ins → the same without the built-in subagent tools. */
const withoutSubagentTools = new WeakMap<ToolRegistry, ToolRegistry>();

/**
 * The tools of a child session at subagentMaxDepth: the agent's (from `withBuiltinTools`) without
 * the built-in subagent tools, which it could not use. A registry not built there is returned as is.
 */
export function toolsAtDepthLimit(tools: ToolRegistry): ToolRegistry {
  return withoutSubagentTools.get(tools) ?? tools;
}

/** The deps with the built-in tools added to each agent's registry. */
export function withBuiltinTools(deps: ActivityDeps): ActivityDeps {
  const augmented = new WeakMap<ActivityDeps, ActivityDeps>();
  const augment = (agentDeps: ActivityDeps): ActivityDeps => {
    let done = augmented.get(agentDeps);
    if (!done) {
      const { forAgent: _ignored, ...rest } = agentDeps;
      done = { ...rest, tools: registryWithBuiltins(agentDeps, deps) };
      augmented.set(agentDeps, done);
    }
    return done;
  };
  return { ...deps, forAgent: (agentId) => augment(depsForAgent(deps, agentId)) };
}

function registryWithBuiltins(agentDeps: ActivityDeps, workerDeps: ActivityDeps): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of agentDeps.tools.list()) registry.register(tool);
  const spawning = offersSubagentTools(agentDeps.config) ? subagentTools(agentDeps, workerDeps.sessions) : [];
  const builtins = [memorySearchTool(agentDeps), ...historyTools(agentDeps), ...spawning];
  // They read, or act under the call's idempotency key: any error they throw (a database blip) is worth another run.
  for (const tool of builtins)
    if (!agentDeps.tools.get(tool.name)) registry.register({ ...tool, retry: tool.retry ?? DEFAULTS.toolRetry });
  const added = new Set(spawning.filter((tool) => !agentDeps.tools.get(tool.name)).map((tool) => tool.name));
  if (added.size > 0) {
    const leaf = new ToolRegistry();
    for (const tool of registry.list()) if (!added.has(tool.name)) leaf.register(tool);
    withoutSubagentTools.set(registry, leaf);
  }
  return registry;
}
