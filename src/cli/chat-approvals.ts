/**
 * The chat's side of tool approvals: while a turn runs, it says once per call "waiting for approval:
 * <tool> <id>" (and once when the turn waits for a compaction running beside the session), and `/approve` / `/deny` decide a call of the chat's own session. A decision typed
 * before the call is seen waits for it (piped input arrives at once).
 */
import { userInfo } from 'node:os';
import type { KeelClient } from '../client/keel-client';
import type { ApprovalOutcome, PendingApproval } from '../protocol';
import { backgroundCompactionLine } from '../compaction/background-line';

/** How often the chat asks the session which calls wait. */
const POLL_MS = 500;

/** The calls of one turn that wait, as the chat has seen them. */
export interface ApprovalWatch {
  /** Decides a waiting call: `words` are `[id] [note or reason…]`; the id may be left out when one call waits. */
  decide(decision: 'approve' | 'deny', words: readonly string[]): Promise<ApprovalOutcome | string>;
  stop(): void;
}

/** Watches the session's waiting calls while a turn runs; `say` tells the person about each new one. */
export function watchApprovals(client: KeelClient, sessionKey: string, say: (line: string) => void): ApprovalWatch {
  let waiting: readonly PendingApproval[] = [];
  const told = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const waiters: Array<() => void> = [];
  const poll = async () => {
    const status = await client.getStatus(sessionKey).catch(() => undefined);
    waiting = status?.pendingApprovals ?? waiting;
    // The turn waits for a compaction beside the session: said once, with how long it has run.
    const beside = status?.backgroundCompaction;
    if (beside?.turnWaitingMs !== undefined && !told.has(beside.compactionId)) {
      told.add(beside.compactionId);
      say(backgroundCompactionLine(beside));
    }
    for (const a of waiting) {
      if (told.has(a.approvalId)) continue;
      told.add(a.approvalId);
      say(`waiting for approval: ${a.toolName} ${a.approvalId} — /approve or /deny [reason]`);
    }
    if (waiting.length > 0) for (const wake of waiters.splice(0)) wake();
  };
  const tick = async () => {
    await poll();
    if (!stopped) timer = setTimeout(() => void tick(), POLL_MS);
  };
  void tick();

  return {
    async decide(decision, words) {
      while (waiting.length === 0 && !stopped) await new Promise<void>((resolve) => waiters.push(resolve));
      const [first = '', ...rest] = words;
      const named = first.length >= 8 ? waiting.find((a) => a.approvalId.startsWith(first)) : undefined;
      if (!named && waiting.length !== 1)
        return waiting.length === 0
          ? 'no tool call of this session waits for approval'
          : `${waiting.length} calls wait: name one (${waiting.map((a) => `${a.toolName} ${a.approvalId}`).join(', ')})`;
      const target = named ?? waiting[0]!;
      const said = (named ? rest : words).join(' ').trim();
      const by = person();
      const outcome =
        decision === 'approve'
          ? await client.approve(sessionKey, target.approvalId, { by, ...(said ? { note: said } : {}) })
          : await client.deny(sessionKey, target.approvalId, { by, ...(said ? { reason: said } : {}) });
      waiting = waiting.filter((a) => a.approvalId !== target.approvalId);
      return outcome;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const wake of waiters.splice(0)) wake();
    },
  };
}

function person(): string {
  try {
    return userInfo().username;
  } catch {
    return 'chat';
  }
}
