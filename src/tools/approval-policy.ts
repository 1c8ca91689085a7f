/**
 * Whether a tool call waits for a person: the tool's own `approval`, or the agent's `approvalTools`
 * (names, or patterns with `*`). Pure; the model-call activity asks it for each call of a reply.
 */
import type { ApprovalContext, ToolDefinition } from './registry';

/** How a tool call is decided before it runs. */
export type ApprovalNeed = 'none' | 'always' | 'ask-tool';

/** What the policy can say without the call's input: `ask-tool` means the tool's function decides on it. */
export function approvalNeed(
  tool: Pick<ToolDefinition, 'name' | 'approval'> | undefined,
  toolName: string,
  approvalTools: readonly string[],
): ApprovalNeed {
  if (approvalTools.some((pattern) => matchesToolPattern(pattern, toolName))) return 'always';
  if (tool?.approval === 'always') return 'always';
  return typeof tool?.approval === 'function' ? 'ask-tool' : 'none';
}

/** The tool's own function on the call's input; a function that throws asks for approval (fail closed). */
export function toolAsksApproval(
  tool: Pick<ToolDefinition, 'approval'>,
  input: unknown,
  ctx: ApprovalContext,
): boolean {
  if (typeof tool.approval !== 'function') return tool.approval === 'always';
  try {
    return tool.approval(input, ctx);
  } catch {
    return true;
  }
}

/** A tool name against a configured name or pattern, where `*` stands for any run of characters. */
export function matchesToolPattern(pattern: string, toolName: string): boolean {
  if (!pattern.includes('*')) return pattern === toolName;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(toolName);
}
