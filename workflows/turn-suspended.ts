/**
 * A turn stopping for continue-as-new: at a tool call that waits for approval, or between two rounds
 * of a long run. Thrown from where it stops and completed on its way up (for an approval, the reply and
 * call index; then the turn and its request), so the serving loop hands the whole `SuspendedTurn` to
 * the next run.
 */
import type { PendingApproval, SuspendedAtApproval, SuspendedTurn } from '../src/protocol';

export class TurnSuspended extends Error {
  override readonly name = 'TurnSuspended';
  private at?: Pick<SuspendedAtApproval, 'reply' | 'callIndex'>;
  private turn?: Pick<SuspendedTurn, 'request' | 'sessionId' | 'progress'>;
  /** The round the turn stopped before (absent when it stopped at an approval). */
  private round?: number;

  constructor(readonly approval?: PendingApproval) {
    super(
      approval
        ? `turn suspended at approval ${approval.approvalId} for continue-as-new`
        : 'turn suspended between rounds for continue-as-new',
    );
  }

  /** A long turn handing itself on before its next model call (round `round`). */
  static beforeRound(round: number): TurnSuspended {
    const suspended = new TurnSuspended();
    suspended.round = round;
    return suspended;
  }

  /** The reply whose tool call waits, and that call's index. */
  inReply(at: Pick<SuspendedAtApproval, 'reply' | 'callIndex'>): this {
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
    if (!this.turn) throw new Error('a suspended turn reached the loop without its turn');
    if (!this.approval) return { ...this.turn, atRound: this.round ?? this.turn.progress.modelCalls + 1 };
    if (!this.at) throw new Error('a turn suspended at an approval reached the loop without its reply');
    return { ...this.turn, ...this.at, approval: this.approval };
  }
}
