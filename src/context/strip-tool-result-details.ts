/**
 * Removes tool-private `details` from tool results (as OpenClaw, details never reach a model or a summary; docs/architecture.md, "Invariants").
 */
import type { AgentMessage } from './types';

/** Returns messages whose tool results carry no `details`; the same array when none had any. */
export function stripToolResultDetails(messages: AgentMessage[]): AgentMessage[] {
  if (!messages.some(hasDetails)) return messages;
  return messages.map((m) => {
    if (!hasDetails(m)) return m;
    const { details: _omitted, ...rest } = m as AgentMessage & { details?: unknown };
    return rest as AgentMessage;
  });
}

function hasDetails(m: AgentMessage): boolean {
  return m.role === 'toolResult' && Object.prototype.hasOwnProperty.call(m, 'details');
}
