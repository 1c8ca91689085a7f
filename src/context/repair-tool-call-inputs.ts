/**
 * Tool-call input repair (OpenClaw's tool-call input repair): removes tool-call blocks a provider would
 * reject before any pairing or turn logic looks at them.
 */
import {
  isToolCallBlock,
  type AgentMessage,
  type AssistantBlock,
  type AssistantMessage,
  type ToolCallBlock,
} from './types';

/** Provider limit on tool names (Anthropic and OpenAI both cap at 64 characters). */
export const MAX_TOOL_NAME_LENGTH = 64;
const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
/** Replaces inline attachment bodies in `sessions_spawn` calls so base64 payloads never reach a model again. */
export const ATTACHMENT_REDACTION_MARKER = '[keel: inline attachment content redacted]';
const SPAWN_TOOL_NAME = 'sessions_spawn';

export interface RepairToolCallInputsOptions {
  /** When given, calls to other tools are dropped (names compared case-insensitively). */
  allowedToolNames?: Iterable<string> | undefined;
}

export interface RepairToolCallInputsResult {
  /** The repaired messages; the input array itself when nothing changed. */
  messages: AgentMessage[];
  /** Tool-call blocks removed (bad id, name, missing input, not allowed, or a repeated id). */
  droppedToolCalls: number;
  /** Assistant messages removed because dropping their calls left them with no blocks. */
  droppedAssistantMessages: number;
}

/**
 * Drops tool-call blocks that have no `input`/`arguments` object, no non-empty `id`, or a name that is
 * empty, longer than 64 characters, not `[A-Za-z0-9_-]+`, or (with `allowedToolNames`) not allowed.
 * Names are trimmed. A call whose id repeats an earlier call's id is dropped too (Keel: Anthropic
 * rejects duplicate `tool_use` ids, and a duplicated transcript entry produces them). An assistant
 * message left with no blocks is dropped. Inline attachment `content` in `sessions_spawn` arguments
 * is replaced by {@link ATTACHMENT_REDACTION_MARKER}.
 *
 * @example repairToolCallInputs(messages, { allowedToolNames: ['read', 'exec'] })
 */
export function repairToolCallInputs(
  messages: AgentMessage[],
  options: RepairToolCallInputsOptions = {},
): RepairToolCallInputsResult {
  const allowed = options.allowedToolNames
    ? new Set([...options.allowedToolNames].map((n) => n.trim().toLowerCase()))
    : undefined;
  const seenCallIds = new Set<string>();
  let droppedToolCalls = 0;
  let droppedAssistantMessages = 0;
  let changed = false;
  const out: AgentMessage[] = [];

  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) {
      out.push(message);
      continue;
    }
    let blocksChanged = false;
    const blocks: AssistantBlock[] = [];
    for (const block of message.content) {
      if (!block || typeof block !== 'object' || !isToolCallBlock(block)) {
        blocks.push(block);
        continue;
      }
      const repaired = repairCall(block, allowed);
      if (!repaired || seenCallIds.has(repaired.id)) {
        droppedToolCalls += 1;
        blocksChanged = true;
        continue;
      }
      seenCallIds.add(repaired.id);
      if (repaired !== block) blocksChanged = true;
      blocks.push(repaired);
    }
    if (!blocksChanged) {
      out.push(message);
      continue;
    }
    changed = true;
    if (blocks.length === 0) {
      droppedAssistantMessages += 1;
      continue;
    }
    out.push({ ...message, content: blocks } satisfies AssistantMessage);
  }

  return { messages: changed ? out : messages, droppedToolCalls, droppedAssistantMessages };
}

/** True when `name` is acceptable as a provider tool name (after trimming). */
export function isValidToolName(name: unknown): name is string {
  if (typeof name !== 'string') return false;
  const trimmed = name.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_TOOL_NAME_LENGTH && TOOL_NAME_PATTERN.test(trimmed);
}

/** The repaired call, the same block when it needs nothing, or undefined when it must be dropped. */
function repairCall(block: ToolCallBlock, allowed: Set<string> | undefined): ToolCallBlock | undefined {
  if (typeof block.id !== 'string' || block.id.trim().length === 0) return undefined;
  if (!isValidToolName(block.name)) return undefined;
  const name = block.name.trim();
  if (allowed && !allowed.has(name.toLowerCase())) return undefined;
  const field = isPlainObject(block.arguments) ? 'arguments' : 'input';
  const args = block[field];
  if (!isPlainObject(args)) return undefined;

  const redacted = name === SPAWN_TOOL_NAME ? redactAttachments(args) : args;
  // A non-object `arguments` beside a usable `input` would shadow it at the model edge.
  const strayArguments = field === 'input' && block.arguments !== undefined;
  if (name === block.name && redacted === args && !strayArguments) return block;
  const repaired: ToolCallBlock = { ...block, name, [field]: redacted };
  if (strayArguments) delete repaired.arguments;
  return repaired;
}

/** Replaces `attachments[].content` strings with the marker; the same object when none needs it. */
function redactAttachments(args: Record<string, unknown>): Record<string, unknown> {
  const attachments = args.attachments;
  if (!Array.isArray(attachments)) return args;
  let changed = false;
  const next = attachments.map((a: unknown) => {
    if (!isPlainObject(a) || typeof a.content !== 'string' || a.content === ATTACHMENT_REDACTION_MARKER) return a;
    changed = true;
    return { ...a, content: ATTACHMENT_REDACTION_MARKER };
  });
  return changed ? { ...args, attachments: next } : args;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
