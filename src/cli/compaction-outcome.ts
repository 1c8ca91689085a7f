import type { CompactionWorkflowResult, SessionStatus } from '../protocol';

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

/**
 * The chat's `/compact` line: the context as `/status` counts it (prompt overhead included) before and
 * after, where the compaction's own figures count the history alone, and whether the summary is the
 * model's or the extractive fallback written when every summarizer attempt failed.
 */
export function chatCompactionLine(
  result: CompactionWorkflowResult,
  before: Pick<SessionStatus, 'contextTokens'>,
  after: Pick<SessionStatus, 'contextTokens'>,
): string {
  if (result.status === 'skipped') return compactionOutcomeLine(result);
  const figures = `context ${before.contextTokens.toLocaleString('en-US')} → ${after.contextTokens.toLocaleString('en-US')} tokens, as /status counts it (history ${result.tokensBefore.toLocaleString('en-US')} → ${result.tokensAfter.toLocaleString('en-US')})`;
  if (result.status !== 'succeeded') return `compaction ${result.status}: ${figures}`;
  const summary = result.degraded
    ? 'the summary is extractive: every summarizer call failed, so it holds the messages’ key lines, not a model’s summary (`keel compactions retry` asks the model again)'
    : 'the summary is the model’s';
  return `compaction succeeded: ${figures}; ${summary}`;
}
