/**
 * `allowedAgents` (KEEL_ALLOWED_AGENTS): the agents a worker and the clients built from the same
 * configuration serve. Unset → every agent. Anyone who can reach the Temporal namespace can address
 * any session (docs/security.md, "Tenancy"); this is the check that runs on Keel's side of it.
 */

/** Undefined when `agentId` may be served; otherwise the error message, naming the setting and the fix. */
export function agentNotAllowed(allowed: readonly string[] | undefined, agentId: string): string | undefined {
  if (!allowed || allowed.includes(agentId)) return undefined;
  return `agent ${shown(agentId)} is not in KEEL_ALLOWED_AGENTS (${allowed.join(', ')}); nothing was written. Send it to a worker that serves that agent, or add the agent to KEEL_ALLOWED_AGENTS`;
}

function shown(agentId: string): string {
  return agentId.length > 80 ? `${agentId.slice(0, 80)}… (${agentId.length} characters)` : agentId;
}
