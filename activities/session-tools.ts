import type { ActivityDeps } from '../src/runtime/deps';
import type { ToolRegistry } from '../src/tools/registry';
import { toolsAtDepthLimit } from './builtin-tools';
import { nextSpawnDepth, subagentIdOf } from './subagent-runs';

/**
 * The tools a model call in `sessionKey` offers: the agent's, less the subagent tools for a child at
 * subagentMaxDepth. Such a child could not spawn (its sessions_spawn would be refused) and has no
 * children to steer, read or kill, so their definitions would cost every request for nothing.
 */
export async function toolsForSession(deps: ActivityDeps, agentId: string, sessionKey: string): Promise<ToolRegistry> {
  const atLimit = toolsAtDepthLimit(deps.tools);
  if (atLimit === deps.tools || !subagentIdOf(sessionKey)) return deps.tools;
  return (await nextSpawnDepth(deps.db, agentId, sessionKey)) > deps.config.subagentMaxDepth ? atLimit : deps.tools;
}
