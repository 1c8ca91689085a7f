/**
 * The context pipeline over a window that grows by appends (issue 20: work proportional to what
 * changed). A worker's cached window hands each turn the same message objects plus the new ones, and
 * a healthy session's pipeline repairs nothing (it only strips tool results' `details`); walking a
 * long window through every step each turn then costs cache misses for nothing. Here,
 * when the last run only stripped details and the new input starts with that input, only the
 * messages from the last turn boundary on run through it, after the last run's output up to there.
 * The result is always `runContextPipeline`'s (a property test compares the two).
 */
import { isUserTurn } from './limit-history-turns';
import { toolCallsOf } from './message-parts';
import {
  runContextPipeline,
  type ContextPipelineOptions,
  type ContextPipelineReport,
  type ContextPipelineResult,
} from './pipeline';
import type { AgentMessage } from './types';

/** What the last run proved: `input` went through the pipeline with nothing repaired, one output message per input message. */
interface CleanRun {
  readonly input: readonly AgentMessage[];
  /** The pipeline's messages for `input`: the same objects, tool results with `details` stripped. */
  readonly output: AgentMessage[];
  /** Messages of `output` before `boundary` that are stripped copies (the report counts them). */
  readonly strippedBefore: number;
  readonly provider: string;
  readonly historyLimit: number | undefined;
  /** A turn boundary of `input` (see `isBoundary`): runs may start there. */
  readonly boundary: number;
  /** Tool call ids of `input` before `boundary`: a later call reusing one is a repair. */
  readonly callIdsBefore: Set<string>;
  /** User turns in `input` (the history limit counts them). */
  readonly userTurns: number;
}

/** A pipeline result, and whether it came from the new messages alone (`tail`) or the whole input. */
export type IncrementalPipelineResult = ContextPipelineResult & { readonly ran: 'tail' | 'full' };

/** One session's pipeline, remembering the last clean run. Not shared between sessions. */
export class IncrementalPipeline {
  private last: CleanRun | undefined;

  run(messages: AgentMessage[], options: ContextPipelineOptions): IncrementalPipelineResult {
    const tail = this.tryTail(messages, options);
    if (tail) return { ...tail, ran: 'tail' };
    const full = runContextPipeline(messages, options);
    this.last =
      onlyStripped(full.report) && options.allowedToolNames === undefined
        ? cleanRun(messages, full.messages, options)
        : undefined;
    return { ...full, ran: 'full' };
  }

  /** The result from the new messages alone, or undefined when the whole input must run. */
  private tryTail(messages: AgentMessage[], options: ContextPipelineOptions): ContextPipelineResult | undefined {
    const last = this.last;
    this.last = undefined;
    if (
      !last ||
      options.allowedToolNames !== undefined ||
      options.provider !== last.provider ||
      options.historyLimit !== last.historyLimit
    )
      return undefined;
    const known = last.input.length;
    if (messages.length <= known || !startsWith(messages, last.input)) return undefined;
    // A history limit that starts to cut changes the front of the window: the whole input runs.
    let userTurns = last.userTurns;
    for (let i = known; i < messages.length; i++) if (isUserTurn(messages[i]!)) userTurns++;
    if (!withinLimit(userTurns, options.historyLimit)) return undefined;
    // The latest boundary up to the first new message; the last run's boundary always qualifies.
    let boundary = Math.min(known, messages.length - 1);
    while (boundary > last.boundary && !isBoundary(messages, boundary)) boundary--;
    const callIdsBefore = last.callIdsBefore;
    let strippedBefore = last.strippedBefore;
    for (let i = last.boundary; i < boundary; i++) {
      addCallIds(callIdsBefore, messages[i]!);
      if (last.output[i] !== messages[i]) strippedBefore++;
    }
    const tail = messages.slice(boundary);
    // A call id the clean part already used is dropped by the full run: let it do that.
    for (const m of tail)
      if (m.role === 'assistant' && toolCallsOf(m).some((c) => callIdsBefore.has(c.id))) return undefined;
    const result = runContextPipeline(tail, options);
    if (!onlyStripped(result.report)) return undefined;
    // Nothing stripped anywhere: the input itself, as the whole pipeline would hand it back.
    const output =
      strippedBefore === 0 && result.messages === tail
        ? messages
        : [...last.output.slice(0, boundary), ...result.messages];
    this.last = {
      input: messages,
      output,
      strippedBefore,
      provider: options.provider,
      historyLimit: options.historyLimit,
      boundary,
      callIdsBefore,
      userTurns,
    };
    return {
      messages: output,
      report: { ...result.report, strippedDetails: result.report.strippedDetails + strippedBefore },
    };
  }
}

/**
 * A turn boundary: a user message opening the input, or one right after an assistant reply with no
 * tool calls. No step looks across it: the reply's pairing span holds no calls, turn validation
 * neither merges a user message into an assistant nor drops one that opens a run, and tool-call
 * input repair only needs the ids before it (`callIdsBefore`).
 */
function isBoundary(messages: readonly AgentMessage[], i: number): boolean {
  const m = messages[i]!;
  if (m.role !== 'user') return false;
  if (i === 0) return true;
  const before = messages[i - 1]!;
  return before.role === 'assistant' && toolCallsOf(before).length === 0;
}

/** The run repaired nothing: at most it stripped details, so output and input match one to one. */
function onlyStripped(report: ContextPipelineReport): boolean {
  const { toolCallInputs, pairing, turns, historyLimit, pairingAfterLimit } = report;
  return (
    toolCallInputs.droppedToolCalls + toolCallInputs.droppedAssistantMessages === 0 &&
    unpaired(pairing) &&
    unpaired(pairingAfterLimit) &&
    historyLimit.droppedMessageCount === 0 &&
    (!turns ||
      turns.strippedPartialToolCalls +
        turns.droppedPartialToolResults +
        turns.droppedEmptyMessages +
        turns.droppedLeadingMessages +
        turns.mergedUserMessages +
        turns.mergedAssistantMessages ===
        0)
  );
}

function unpaired(p: ContextPipelineReport['pairing']): boolean {
  return p.added + p.droppedDuplicateCount + p.droppedOrphanCount === 0 && !p.moved;
}

function cleanRun(
  messages: readonly AgentMessage[],
  output: AgentMessage[],
  options: ContextPipelineOptions,
): CleanRun {
  let boundary = 0;
  for (let i = messages.length - 1; i > 0; i--) {
    if (isBoundary(messages, i)) {
      boundary = i;
      break;
    }
  }
  const callIdsBefore = new Set<string>();
  let userTurns = 0;
  let strippedBefore = 0;
  for (let i = 0; i < messages.length; i++) {
    if (i < boundary) {
      addCallIds(callIdsBefore, messages[i]!);
      if (output[i] !== messages[i]) strippedBefore++;
    }
    if (isUserTurn(messages[i]!)) userTurns++;
  }
  return {
    input: messages,
    output,
    strippedBefore,
    provider: options.provider,
    historyLimit: options.historyLimit,
    boundary,
    callIdsBefore,
    userTurns,
  };
}

function addCallIds(ids: Set<string>, m: AgentMessage): void {
  if (m.role === 'assistant') for (const c of toolCallsOf(m)) ids.add(c.id);
}

function startsWith(messages: readonly AgentMessage[], prefix: readonly AgentMessage[]): boolean {
  for (let i = 0; i < prefix.length; i++) if (messages[i] !== prefix[i]) return false;
  return true;
}

/** The limit cuts nothing: `limitHistoryTurns` keeps everything when there are no more user turns than it. */
function withinLimit(userTurns: number, limit: number | undefined): boolean {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return true;
  return userTurns <= Math.floor(limit);
}
