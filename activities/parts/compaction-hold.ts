import type { KeelConfig } from '../../src/config/keel-config';
import type { SessionRow } from '../../src/store/schema';
import type { CompactionHoldInput } from '../../src/turn/turn-decisions';

/** The storm hold's input from the session row (its last compaction's yield) and the agent's config. */
export function compactionHoldInput(
  session: SessionRow | undefined,
  config: Pick<KeelConfig, 'compactionMinReclaimShare'>,
  contextWindow: number,
): CompactionHoldInput {
  const before = session?.last_compaction_tokens_before;
  const after = session?.last_compaction_tokens_after;
  return {
    lastCompaction: before != null && after != null ? { tokensBefore: before, tokensAfter: after } : null,
    minReclaimShare: config.compactionMinReclaimShare,
    contextWindow,
  };
}
