/**
 * Every agent's built-in tools next to the application's: `memory_search` (OpenClaw's memory recall),
 * the recall tools `history_search` / `history_expand`, and the subagent tools. An application's own tool of the same name wins.
 */
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { ToolRegistry } from '../src/tools/registry';
import { DEFAULTS } from '../src/config/defaults';
import { memorySearchTool } from './memory-search-tool';
import { historyTools } from './history-tools';
import { subagentTools } from './subagent-tools';

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
  const builtins = [memorySearchTool(agentDeps), ...historyTools(agentDeps), ...(agentDeps.config.subagentMaxDepth > 0 ? subagentTools(agentDeps, workerDeps.sessions) : [])];
  // They read, or act under the call's idempotency key: any error they throw (a database blip) is worth another run.
  for (const tool of builtins) if (!agentDeps.tools.get(tool.name)) registry.register({ ...tool, retry: tool.retry ?? DEFAULTS.toolRetry });
  return registry;
}


