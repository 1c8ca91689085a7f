import type { CompactionWorkflowResult } from '../protocol';

/**
 * What a manual compaction did, in one line for `keel compact` and the chat's `/compact`. A skipped
 * one says nothing was written and why: it is never worded as a success.
 */
export function compactionOutcomeLine(result: CompactionWorkflowResult): string {
  if (result.status !== 'skipped') {
    return `compaction ${result.status}${result.degraded ? ' (degraded: extractive summary)' : ''}: ${result.tokensBefore} → ${result.tokensAfter} tokens`;
  }
  const unchanged = `nothing was written; the context stays at ${result.tokensBefore} tokens`;
  switch (result.skip?.reason) {
    case 'no-gain':
      return `compaction skipped, nothing to gain: with its summary the context would take ${result.skip.wouldBeTokens} tokens, not fewer than the ${result.tokensBefore} it takes now; ${unchanged}`;
    case 'nothing-to-summarize':
      return `compaction skipped, nothing to summarize before the recent messages; ${unchanged}`;
    default:
      return `compaction skipped (nothing to summarize, or a summary would not make the context smaller); ${unchanged}`;
  }
}
