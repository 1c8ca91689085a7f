import { agentNotAllowed } from '../security/allowed-agents';
import type { ApiDeps } from './api-deps';
import { ApiProblem } from './problem';

/** `agent` as a query parameter names; a 403 problem naming it when KEEL_ALLOWED_AGENTS leaves it out. */
export function allowedAgentParam(deps: ApiDeps, agent: string): string {
  const refusal = agentNotAllowed(deps.settings.defaults.allowedAgents, agent);
  if (refusal) throw new ApiProblem(403, 'agent-not-allowed', refusal, 'agent');
  return agent;
}

/** Rows of the agents this server may show (all of them when KEEL_ALLOWED_AGENTS is unset). */
export function ofAllowedAgents<T extends { readonly agentId: string }>(deps: ApiDeps, rows: readonly T[]): T[] {
  const allowed = deps.settings.defaults.allowedAgents;
  return allowed ? rows.filter((r) => allowed.includes(r.agentId)) : [...rows];
}
