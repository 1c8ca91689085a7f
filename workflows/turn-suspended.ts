/**
 * A turn stopping at a tool call that waits for approval, because the run is about to continue as
 * new. Thrown from the wait and completed on its way up (the reply and call index, then the turn and
 * its request), so the serving loop hands the whole `SuspendedTurn` to the next run.
 */
import type { PendingApproval, SuspendedTurn } from '../src/protocol';

export class TurnSuspended extends Error {
  override readonly name = 'TurnSuspended';
  private at?: Pick<SuspendedTurn, 'reply' | 'callIndex'>;
  private turn?: Pick<SuspendedTurn, 'request' | 'sessionId' | 'progress'>;

  constructor(readonly approval: PendingApproval) {
    super(`turn suspended at approval ${approval.approvalId} for continue-as-new`);
  }

  /** The reply whose tool call waits, and that call's index. */
  inReply(at: Pick<SuspendedTurn, 'reply' | 'callIndex'>): this {
    this.at = at;
    return this;
  }

  /** The turn and its request. */
  ofTurn(turn: Pick<SuspendedTurn, 'request' | 'sessionId' | 'progress'>): this {
    this.turn = turn;
    return this;
  }

  /** The whole state to hand on; a suspension that lost a part on its way up is a bug. */
  state(): SuspendedTurn {
    if (!this.at || !this.turn) throw new Error('a suspended turn reached the loop without its reply or its turn');
    return { ...this.turn, ...this.at, approval: this.approval };
  }
}
