/**
 * Anthropic's extended-thinking rules, checked by the fake on every request that enables thinking,
 * worded as the API words its 400s: the budget (at least 1,024, below `max_tokens`), no temperature
 * but 1, no forced tool choice, and during a tool loop the last assistant message must start with
 * the signed thinking it was sent with.
 */
import type { FakeRequestBody } from './fake-anthropic';

const DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

type Block = { type?: string; signature?: unknown };

const blocksOf = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);
const isThinking = (b: Block | undefined) => b?.type === 'thinking' || b?.type === 'redacted_thinking';

/** The 400 message for a thinking-enabled request the API refuses, or undefined (also when thinking is off). */
export function anthropicThinkingProblem(body: FakeRequestBody): string | undefined {
  const thinking = body.thinking as { type?: string; budget_tokens?: unknown } | undefined;
  if (thinking === undefined || thinking.type === 'disabled') return undefined;
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget))
      return 'thinking.enabled.budget_tokens: Field required';
    if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (typeof body.max_tokens === 'number' && body.max_tokens <= budget)
      return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${DOCS}#max-tokens-and-context-window-size`;
  }
  if (body.temperature !== undefined && body.temperature !== 1)
    return `\`temperature\` may only be set to 1 when thinking is enabled. Please consult our documentation at ${DOCS}#feature-compatibility`;
  const choice = (body.tool_choice as { type?: string } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when `tool_choice` forces tool use.';
  return thinkingOrderProblem(body) ?? toolLoopProblem(body);
}

/** An assistant message with thinking must start with it; a thinking block carries its signature. */
function thinkingOrderProblem(body: FakeRequestBody): string | undefined {
  const messages = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]!.role !== 'assistant') continue;
    const blocks = blocksOf(messages[i]!.content);
    const k = blocks.findIndex((b) => b.type === 'thinking' && (typeof b.signature !== 'string' || b.signature === ''));
    if (k >= 0) return `messages.${i}.content.${k}.thinking.signature: Field required`;
    if (blocks.some(isThinking) && !isThinking(blocks[0]))
      return `messages.${i}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${blocks[0]?.type ?? 'nothing'}.`;
  }
  return undefined;
}

/** While tool results are returned, the last assistant message (the one that called the tools) starts with its thinking. */
function toolLoopProblem(body: FakeRequestBody): string | undefined {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || !blocksOf(last.content).some((b) => b.type === 'tool_result')) return undefined;
  const i = messages.length - 2;
  const first = blocksOf(messages[i]?.content)[0];
  if (messages[i]?.role !== 'assistant' || isThinking(first)) return undefined;
  return (
    `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type ?? 'nothing'}\`. ` +
    'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of ' +
    '`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this ' +
    `requirement, disable \`thinking\`. Please consult our documentation at ${DOCS}`
  );
}
