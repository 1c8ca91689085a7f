/**
 * Which tool calls of a reply wait for a person, marked on the reply the model-call activity returns:
 * the policy lives on the worker (a tool's function, the agent's config), so the workflow learns it
 * from the activity it already runs. A reply with no such call is returned as it was.
 */
import type { ActivityDeps } from '../../src/runtime/deps';
import { depsForAgent } from '../../src/runtime/deps';
import { approvalNeed, toolAsksApproval } from '../../src/tools/approval-policy';
import { toolCallArguments } from '../../src/context/types';
import type { ToolCallApproval } from '../../src/protocol';
import type { ModelCallOutcome } from './model-call';
import { loadToolCall } from './tool-call-io';

/** Where the reply is: enough to read a call's raw arguments when a tool's function decides on them. */
interface ReplyRef {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly now: string;
}

/** The outcome with `approval` on each call that needs one; the same object when none does. */
export async function markApprovals<T extends ModelCallOutcome>(
  allDeps: ActivityDeps,
  ref: ReplyRef,
  outcome: T,
): Promise<T> {
  if (outcome.kind !== 'reply' || outcome.toolCalls.length === 0) return outcome;
  const deps = depsForAgent(allDeps, ref.agentId);
  const { approvalTools, approvalTimeoutMs, approvers } = deps.config;
  const approval: ToolCallApproval = { timeoutMs: approvalTimeoutMs, ...(approvers ? { approvers } : {}) };
  let marked = false;
  const toolCalls = [];
  for (const call of outcome.toolCalls) {
    const tool = deps.tools.get(call.name);
    const need = approvalNeed(tool, call.name, approvalTools);
    const asks =
      need === 'always' ||
      (need === 'ask-tool' &&
        tool !== undefined &&
        toolAsksApproval(tool, await rawInput(allDeps, ref, outcome.entryId, call.id), ref));
    marked ||= asks;
    toolCalls.push(asks ? { ...call, approval } : call);
  }
  return marked ? { ...outcome, toolCalls } : outcome;
}

/** The call's arguments as the model sent them (the policy decides on what the tool would get). */
async function rawInput(allDeps: ActivityDeps, ref: ReplyRef, assistantEntryId: string, toolCallId: string) {
  const call = await loadToolCall(depsForAgent(allDeps, ref.agentId), {
    ...ref,
    assistantEntryId,
    toolCallId,
    resultEntryId: '',
    parentId: '',
  });
  return call ? (toolCallArguments(call) ?? {}) : {};
}
