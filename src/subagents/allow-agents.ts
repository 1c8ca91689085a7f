/**
 * Which agents a session may spawn (`subagentAllowAgents`, OpenClaw's `subagents.allowAgents`): its
 * own always; another only when listed, or when the list holds `*`.
 */

/** Why `agentId` may not spawn `childAgentId`, naming the setting to change; undefined when it may. */
export function spawnNotAllowed(
  allowAgents: readonly string[] | undefined,
  agentId: string,
  childAgentId: string,
): string | undefined {
  if (childAgentId === agentId) return undefined;
  if (allowAgents?.includes('*') || allowAgents?.includes(childAgentId)) return undefined;
  const allowed = allowAgents && allowAgents.length > 0 ? `${agentId}, ${allowAgents.join(', ')}` : `${agentId} only`;
  return (
    `agentId: agent "${agentId}" may not spawn agent "${childAgentId}" (it may spawn: ${allowed}); ` +
    `leave agentId out to spawn your own agent, or add "${childAgentId}" to subagentAllowAgents for agent "${agentId}"`
  );
}
