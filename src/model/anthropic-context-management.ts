/**
 * Keel's `ContextManagement` ↔ Anthropic's beta `context_management` (server compaction
 * `compact_20260112`, context editing `clear_tool_uses_20250919` / `clear_thinking_20251015`), and
 * the compaction block a later request sends back in place of the messages it summarized.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaContextManagementConfig,
  BetaContextManagementResponse,
  BetaMessage,
  BetaMessageParam,
  MessageCreateParamsNonStreaming as BetaCreateParams,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type {
  AppliedContextEdit,
  ContextManagement,
  ModelRequest,
  ModelUsage,
  ProviderCompaction,
} from './model-client';

/** Server compaction's beta header. */
export const COMPACTION_BETA: AnthropicBeta = 'compact-2026-01-12';
/** Context editing's beta header. */
export const CONTEXT_EDITING_BETA: AnthropicBeta = 'context-management-2025-06-27';

/** The beta headers the edits need: compaction and context editing are separate betas. */
export function contextManagementBetas(cm: ContextManagement): AnthropicBeta[] {
  const betas: AnthropicBeta[] = [];
  if (cm.clearToolUses || cm.clearThinking) betas.push(CONTEXT_EDITING_BETA);
  if (cm.compaction) betas.push(COMPACTION_BETA);
  return betas;
}

/**
 * The `context_management` body. Thinking clearing goes first (the API wants it before the other
 * edits); compaction always pauses, so Keel records the summary as its own entry before the reply.
 */
export function toAnthropicContextManagement(cm: ContextManagement): BetaContextManagementConfig {
  const edits: NonNullable<BetaContextManagementConfig['edits']> = [];
  if (cm.clearThinking) {
    const keep = cm.clearThinking.keepTurns;
    edits.push({
      type: 'clear_thinking_20251015',
      keep: keep === 'all' ? 'all' : { type: 'thinking_turns', value: keep },
    });
  }
  if (cm.clearToolUses) {
    const c = cm.clearToolUses;
    edits.push({
      type: 'clear_tool_uses_20250919',
      ...(c.triggerTokens !== undefined ? { trigger: { type: 'input_tokens', value: c.triggerTokens } } : {}),
      ...(c.keepToolUses !== undefined ? { keep: { type: 'tool_uses', value: c.keepToolUses } } : {}),
      ...(c.clearAtLeastTokens !== undefined
        ? { clear_at_least: { type: 'input_tokens', value: c.clearAtLeastTokens } }
        : {}),
      ...(c.excludeTools?.length ? { exclude_tools: c.excludeTools } : {}),
      ...(c.clearToolInputs ? { clear_tool_inputs: true } : {}),
    });
  }
  if (cm.compaction) {
    edits.push({
      type: 'compact_20260112',
      trigger: { type: 'input_tokens', value: cm.compaction.triggerTokens },
      pause_after_compaction: true,
      ...(cm.compaction.instructions ? { instructions: cm.compaction.instructions } : {}),
    });
  }
  return { edits };
}

/**
 * Puts the provider's compaction block where Keel's summary stand-in is: the first message's first
 * block. The block goes in an assistant message (as the API returned it), whatever followed the
 * summary in that user message stays a user message, and an assistant reply right after the block
 * joins it (the paused reply continues the compaction's message).
 */
export function withCompactionBlock(
  messages: readonly Anthropic.MessageParam[],
  compaction: ProviderCompaction,
): BetaMessageParam[] {
  const [first, ...rest] = messages;
  const standIn = first && first.role === 'user' && Array.isArray(first.content) ? first.content[0] : undefined;
  const block = {
    type: 'compaction' as const,
    // A cache breakpoint on the stand-in stays where it was: on the block that replaces it.
    ...(standIn && 'cache_control' in standIn && standIn.cache_control ? { cache_control: standIn.cache_control } : {}),
    content: compaction.summary,
    ...(compaction.encryptedContent !== undefined ? { encrypted_content: compaction.encryptedContent } : {}),
    ...(compaction.signature ? { signature: compaction.signature } : {}),
    ...(compaction.toolChanges ? { tool_changes: compaction.toolChanges as never } : {}),
  };
  type Content = Extract<BetaMessageParam, { role: 'assistant' }>['content'];
  const out: BetaMessageParam[] = [{ role: 'assistant', content: [block] }];
  const remaining = first && first.role === 'user' && Array.isArray(first.content) ? first.content.slice(1) : [];
  if (remaining.length > 0) out.push({ role: 'user', content: remaining as Content });
  for (const message of rest) {
    const previous = out[out.length - 1]!;
    if (
      previous.role === 'assistant' &&
      message.role === 'assistant' &&
      out.length === 1 &&
      Array.isArray(previous.content)
    ) {
      previous.content = [
        ...previous.content,
        ...(Array.isArray(message.content) ? message.content : [{ type: 'text' as const, text: message.content }]),
      ] as Content;
      continue;
    }
    out.push(message as BetaMessageParam);
  }
  return out;
}

/** The beta request body: the standard one, the compaction block in place of the summary, the edits. */
export function toAnthropicBetaParams(
  base: Anthropic.MessageCreateParamsNonStreaming,
  request: ModelRequest,
): BetaCreateParams {
  const cm = request.contextManagement ?? {};
  const { messages: standard, ...rest } = base;
  const messages = request.providerCompaction
    ? withCompactionBlock(standard, request.providerCompaction)
    : (standard as BetaMessageParam[]);
  return {
    ...rest,
    messages,
    context_management: toAnthropicContextManagement(cm),
    betas: contextManagementBetas(cm),
  };
}

/** The compaction block of a beta reply (content and metadata verbatim), or undefined. */
export function compactionOf(message: BetaMessage): ProviderCompaction | undefined {
  const block = message.content.find((b) => b.type === 'compaction');
  if (!block || block.type !== 'compaction') return undefined;
  return {
    summary: block.content,
    encryptedContent: block.encrypted_content ?? null,
    ...(block.signature ? { signature: block.signature } : {}),
    ...(block.tool_changes ? { toolChanges: block.tool_changes } : {}),
  };
}

/** The edits the provider applied, in Keel's words. */
export function appliedEditsOf(cm: BetaContextManagementResponse | null | undefined): AppliedContextEdit[] {
  return (cm?.applied_edits ?? []).map((edit) => ({
    type: edit.type,
    clearedInputTokens: edit.cleared_input_tokens,
    ...('cleared_tool_uses' in edit ? { clearedToolUses: edit.cleared_tool_uses } : {}),
    ...('cleared_thinking_turns' in edit ? { clearedThinkingTurns: edit.cleared_thinking_turns } : {}),
  }));
}

/** The compaction iteration's usage (not included in the top-level usage), or undefined. */
export function compactionUsageOf(message: BetaMessage): ModelUsage | undefined {
  const iteration = message.usage.iterations?.find((i) => i.type === 'compaction');
  if (!iteration || iteration.type !== 'compaction') return undefined;
  return {
    input: iteration.input_tokens,
    output: iteration.output_tokens,
    cacheRead: iteration.cache_read_input_tokens,
    cacheWrite: iteration.cache_creation_input_tokens,
  };
}
