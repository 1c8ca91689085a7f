/**
 * Anthropic prompt caching: `cache_control` breakpoints on the stable prefix of a request. The
 * cache key is the exact prefix (tools → system → messages) up to a marked block, so a marker only
 * pays off where the next request repeats the bytes before it. At most 4 markers per request.
 *
 * 1. the last tool: the tool list, unchanged across a worker's life;
 * 2. the system prompt: tools + system;
 * 3. the end of the previous call's prompt (the message before the newest assistant reply): read
 *    back from the cache the previous call wrote — the last turn, or the last tool round;
 * 4. the end of this prompt: written for the next call (the next tool round or the next turn).
 *
 * A request that repeats an earlier call's messages and adds some (a summary asked on the
 * conversation's own cache) names how many it repeats: its markers go where that call put them,
 * and the added messages carry none, so the prefix reads the cache that call wrote.
 */
import type Anthropic from '@anthropic-ai/sdk';

const EPHEMERAL: Anthropic.CacheControlEphemeral = { type: 'ephemeral' };

/**
 * The request with cache breakpoints added (a new object; the input is not changed). `prefixMessages`:
 * the messages placed as an earlier call of that many messages placed them (default: all).
 */
export function withCacheBreakpoints(
  params: Anthropic.MessageCreateParamsNonStreaming,
  prefixMessages = params.messages.length,
): Anthropic.MessageCreateParamsNonStreaming {
  const out = { ...params };
  if (out.tools && out.tools.length > 0) {
    const tools = [...out.tools];
    tools[tools.length - 1] = { ...tools[tools.length - 1]!, cache_control: EPHEMERAL } as Anthropic.ToolUnion;
    out.tools = tools;
  }
  if (typeof out.system === 'string' && out.system !== '') {
    out.system = [{ type: 'text', text: out.system, cache_control: EPHEMERAL }];
  }
  const messages = [...out.messages];
  const last = Math.min(prefixMessages, messages.length) - 1;
  const lastReply = messages
    .slice(0, last + 1)
    .map((m) => m.role)
    .lastIndexOf('assistant');
  // Marks go on user messages only (assistant turns may end in signed thinking, which takes no marker).
  for (const index of new Set([lastReply - 1, last])) {
    if (index >= 0 && messages[index]!.role === 'user') messages[index] = markLastBlock(messages[index]!);
  }
  out.messages = messages;
  return out;
}

function markLastBlock(message: Anthropic.MessageParam): Anthropic.MessageParam {
  const blocks: Anthropic.ContentBlockParam[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content];
  const lastBlock = blocks[blocks.length - 1];
  if (!lastBlock) return message;
  blocks[blocks.length - 1] = { ...lastBlock, cache_control: EPHEMERAL } as Anthropic.ContentBlockParam;
  return { ...message, content: blocks } as Anthropic.MessageParam;
}
