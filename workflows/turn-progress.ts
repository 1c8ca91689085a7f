/**
 * What one turn has done so far, kept by the workflow between its steps: the entry the next step
 * appends after, the usage its model calls reported, its tool calls, its compactions, and the run
 * budget it stops at. Plain state with no I/O, so the turn's bookkeeping is tested without a server.
 */
import type {
  ResolvedRunBudget,
  RunningTurn,
  SuspendedTurn,
  TokenUsage,
  TurnResult,
  TurnStopReason,
  TurnToolCall,
} from '../src/protocol';
import { addUsage, NO_USAGE, usageTotal } from '../src/turn/token-usage';
import { isSilentReply } from '../src/context/silent-reply';
import { DEFAULTS } from '../src/config/defaults';
import type { ThinkingLevel } from '../src/turn/thinking-level';

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
  /** Compactions this turn ran (overflow, pre-call check or the provider's own). */
  compactions = 0;
  /** The run budget decided at the turn's start (the agent's, then the request's). */
  budget: ResolvedRunBudget = DEFAULT_BUDGET;
  /** The turn's own thinking level (its request's); unset, the session's or its agent's applies. */
  thinking: ThinkingLevel | undefined;
  /** Why the turn stopped early: set once its last, tool-less call is asked for. */
  stopReason: TurnStopReason | undefined;
  private readonly toolCalls: TurnToolCall[] = [];
  /** Tool calls dropped from `toolCalls`: a long run keeps its most recent, so its payloads stay small. */
  private toolCallsOmitted = 0;

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
    turn.compactions = p.compactions ?? (p.compacted ? 1 : 0);
    turn.toolCalls.push(...p.toolCalls);
    turn.toolCallsOmitted = p.toolCallsOmitted ?? 0;
    turn.budget = p.budget ?? DEFAULT_BUDGET;
    turn.thinking = p.thinking;
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
      // Read by a run of an earlier release, which knew only whether the turn compacted.
      compacted: this.compactions > 0,
      toolCalls: [...this.toolCalls],
      ...(this.toolCallsOmitted > 0 ? { toolCallsOmitted: this.toolCallsOmitted } : {}),
      ...(this.compactions > 0 ? { compactions: this.compactions } : {}),
      budget: this.budget,
      ...(this.thinking ? { thinking: this.thinking } : {}),
    };
  }

  /** What the turn's model call needs to finish the turn when it is the last: the usage so far and the freshness rule. */
  get finish(): { readonly usageBefore: TokenUsage; readonly touch: boolean } {
    return { usageBefore: this.usage, touch: this.touch };
  }

  /** Tokens the turn's model calls were billed, every kind counted. */
  get tokens(): number {
    return usageTotal(this.usage);
  }

  /** A model call answered: its usage counts, and the next entry follows its reply. */
  replied(reply: ModelReply): void {
    this.modelCalls++;
    this.usage = addUsage(this.usage, reply.usage);
    this.parentId = reply.entryId;
  }

  /** A compaction ran in this turn. */
  compactedOnce(): void {
    this.compactions++;
  }

  /** A tool call was answered with its result entry. */
  toolAnswered(
    call: { readonly id: string; readonly name: string },
    result: { readonly entryId: string; readonly isError: boolean; readonly error?: string },
  ): void {
    this.parentId = result.entryId;
    this.toolCalls.push({
      id: call.id,
      name: call.name,
      isError: result.isError,
      ...(result.error !== undefined ? { error: result.error } : {}),
    });
    if (this.toolCalls.length > DEFAULTS.turnToolCallsListed) {
      this.toolCalls.shift();
      this.toolCallsOmitted++;
    }
  }

  /**
   * The limit the turn has reached before its next model call, if any. The next call is then the
   * turn's last: it goes without tools and reports where the run stands.
   */
  budgetReached(): TurnStopReason['limit'] | undefined {
    const { maxModelCalls, maxTokens } = this.budget;
    // One call is kept for the report: the step limit counts it.
    if (maxModelCalls !== null && this.modelCalls >= maxModelCalls - 1) return 'modelCalls';
    if (maxTokens !== null && this.tokens >= maxTokens) return 'tokens';
    return undefined;
  }

  /** The turn stops at `limit`: the reason its result carries (figures as of the report's call). */
  stopAt(limit: TurnStopReason['limit']): void {
    this.stopReason = {
      kind: 'budget',
      limit,
      modelCalls: this.modelCalls,
      maxModelCalls: this.budget.maxModelCalls,
      tokens: this.tokens,
      maxTokens: this.budget.maxTokens,
    };
  }

  /** The turn's progress as status shows it while it runs. */
  running(): RunningTurn {
    return {
      turn: this.turn,
      modelCalls: this.modelCalls,
      tokens: this.tokens,
      budget: this.budget,
      compactions: this.compactions,
      toolCalls: this.toolCalls.length + this.toolCallsOmitted,
    };
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
      ...(this.toolCallsOmitted > 0 ? { toolCallsOmitted: this.toolCallsOmitted } : {}),
      ...(this.stopReason
        ? { stopReason: { ...this.stopReason, modelCalls: this.modelCalls, tokens: this.tokens } }
        : {}),
      ...(this.compactions > 0 ? { compactions: this.compactions } : {}),
    };
  }
}

/** Until the turn's begin decides its budget, and for a turn an earlier release handed on: the defaults. */
const DEFAULT_BUDGET: ResolvedRunBudget = {
  maxModelCalls: DEFAULTS.runBudget.maxModelCalls,
  maxTokens: DEFAULTS.runBudget.maxTokens,
};
