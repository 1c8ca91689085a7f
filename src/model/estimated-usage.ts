/**
 * Keel's own count of a call's usage, for a server that reports none: the request's system prompt,
 * messages and tools, and the reply, with Keel's tokenizer and no safety margin. Marked `estimated`
 * so status, billing, spend limits and metrics say so, and window learning never reads it.
 */
import { defaultCountTokens, estimateMessagesTokens } from '../context/estimate-tokens';
import type { AssistantBlock } from '../context/types';
import type { ModelRequest, ModelUsage } from './model-client';

/** The usage of `request` answered with `content`, counted by Keel. */
export function estimatedUsage(request: ModelRequest, content: AssistantBlock[]): ModelUsage {
  const plain = { safetyMargin: 1 };
  const input =
    defaultCountTokens(request.system ?? '') +
    estimateMessagesTokens(request.messages, plain) +
    (request.tools?.length ? defaultCountTokens(JSON.stringify(request.tools)) : 0);
  const output = estimateMessagesTokens([{ role: 'assistant', content, stopReason: 'stop' }], plain);
  return { input, output, cacheRead: 0, cacheWrite: 0, estimated: true };
}
