/**
 * The tools that read earlier conversation and memory back to the model. Their calls and results
 * quote what they found, so they are never history search hits: a search would otherwise find the
 * echoes of earlier searches instead of the conversation.
 */
export const HISTORY_SEARCH = 'history_search';
export const HISTORY_EXPAND = 'history_expand';
export const MEMORY_SEARCH = 'memory_search';

const RECALL_TOOLS: ReadonlySet<string> = new Set([HISTORY_SEARCH, HISTORY_EXPAND, MEMORY_SEARCH]);

/** True for a tool whose calls and results are echoes of what it read back. */
export function isRecallTool(name: string): boolean {
  return RECALL_TOOLS.has(name);
}
