/**
 * What one turn has done so far, kept by the workflow between its steps: the entry the next step
 * appends after, the usage its model calls reported, its tool calls, and whether it compacted.
 * Plain state with no I/O, so the turn's bookkeeping is tested without a server.
 */
import type { SuspendedTurn, TokenUsage, TurnResult, TurnToolCall } from '../src/protocol';
import { addUsage, NO_USAGE } from '../src/turn/token-usage';
import { isSilentReply } from '../src/context/silent-reply';

/** The part of a model call's reply the turn's bookkeeping reads. */
interface ModelReply {
  readonly entryId: string;
  readonly text: string;
  readonly usage: TokenUsage;
}

export class TurnProgress {
  /** The entry the turn's next entry follows: the user's message, then each reply and tool result. */
  parentId: string;
  usage: TokenUsage = NO_USAGE;
  modelCalls = 0;
  /**
   * A compaction ran in this turn: the pre-call check is off for the rest of it, and a second
   * overflow fails the turn instead of compacting again.
   */
  compacted = false;
  private readonly toolCalls: TurnToolCall[] = [];

  constructor(
    /** The turn's number in the session (as its reply reports it; on its activities' log lines). */
    readonly turn: number,
    readonly userEntryId: string,
    /** False for system events, which must not refresh the session's idle/daily freshness. */
    readonly touch: boolean,
    /** The request whose channel the reply streams on; absent when nobody listens for its text. */
    readonly streamTo: string | undefined,
  ) {
    this.parentId = userEntryId;
  }

  /** The turn resumed in a new run from what the last run handed on. */
  static resumed(p: SuspendedTurn['progress']): TurnProgress {
    const turn = new TurnProgress(p.turn, p.userEntryId, p.touch, p.streamTo);
    turn.parentId = p.parentId;
    turn.usage = p.usage;
    turn.modelCalls = p.modelCalls;
    turn.compacted = p.compacted;
    turn.toolCalls.push(...p.toolCalls);
    return turn;
  }

  /** What continue-as-new hands on for this turn to resume. */
  snapshot(): SuspendedTurn['progress'] {
    return {
      turn: this.turn,
      userEntryId: this.userEntryId,
      touch: this.touch,
      ...(this.streamTo !== undefined ? { streamTo: this.streamTo } : {}),
      parentId: this.parentId,
      usage: this.usage,
      modelCalls: this.modelCalls,
      compacted: this.compacted,
      toolCalls: [...this.toolCalls],
    };
  }

  /** What the turn's model call needs to finish the turn when it is the last: the usage so far and the freshness rule. */
  get finish(): { readonly usageBefore: TokenUsage; readonly touch: boolean } {
    return { usageBefore: this.usage, touch: this.touch };
  }

  /** A model call answered: its usage counts, and the next entry follows its reply. */
  replied(reply: ModelReply): void {
    this.modelCalls++;
    this.usage = addUsage(this.usage, reply.usage);
    this.parentId = reply.entryId;
  }

  /** A tool call was answered with its result entry. */
  toolAnswered(
    call: { readonly id: string; readonly name: string },
    result: { readonly entryId: string; readonly isError: boolean },
  ): void {
    this.parentId = result.entryId;
    this.toolCalls.push({ id: call.id, name: call.name, isError: result.isError });
  }

  /** The turn's result for its sender, from its final reply; `turn` is the session's count after it. */
  result(final: ModelReply, turn: number): TurnResult {
    const silent = isSilentReply(final.text);
    return {
      reply: silent ? '' : final.text,
      silent,
      userEntryId: this.userEntryId,
      assistantEntryId: final.entryId,
      turn,
      usage: this.usage,
      modelCalls: this.modelCalls,
      ...(this.toolCalls.length > 0 ? { toolCalls: [...this.toolCalls] } : {}),
    };
  }
}
