import type { ActivityDeps } from '../../src/runtime/deps';
import { ApplicationFailure } from '@temporalio/common';
import { activityInfo } from '@temporalio/activity';
import { ToolRegistry } from '../../src/tools/registry';
import { FailureTypes } from '../../src/protocol';
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

/** Registries narrowed to a task's tool names, per session registry: built once, not per model call. */
const narrowed = new WeakMap<ToolRegistry, Map<string, ToolRegistry>>();

/**
 * The tools an agent task (`runAgentTask` with `tools`) is offered: only those names of the
 * session's registry. A name the agent does not have on this worker is refused without retry, with
 * the worker's task queue: the usual cause is a worker of another application (`keel dev`'s) polling
 * the queue the task was sent to.
 */
export function toolsForTask(
  registry: ToolRegistry,
  names: readonly string[] | undefined,
  configuredTaskQueue: string,
): ToolRegistry {
  if (names === undefined) return registry;
  const key = names.join('\n');
  const byNames = narrowed.get(registry) ?? new Map<string, ToolRegistry>();
  narrowed.set(registry, byNames);
  const known = byNames.get(key);
  if (known) return known;
  const unknown = names.filter((name) => !registry.get(name));
  if (unknown.length > 0) {
    const queue = takenFrom(configuredTaskQueue);
    const have = registry
      .list()
      .map((t) => t.name)
      .join(', ');
    throw ApplicationFailure.nonRetryable(
      `tools: this agent has no tool ${unknown.map((n) => JSON.stringify(n)).join(', ')} on the worker that took the task (task queue "${queue}"); it has ${have}. If another application's worker (keel dev's) polls that queue too, give each application its own KEEL_TASK_QUEUE`,
      FailureTypes.InvalidInput,
    );
  }
  const subset = new ToolRegistry();
  for (const name of new Set(names)) subset.register(registry.get(name)!);
  byNames.set(key, subset);
  return subset;
}

/** The task queue the running activity was taken from (the one that matters); the configured one outside an activity. */
function takenFrom(configured: string): string {
  try {
    return activityInfo().taskQueue;
  } catch {
    // Not in an activity (an in-process replay): the worker's configured queue is the best answer.
    return configured;
  }
}
