import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from '../src/runtime/deps';
import { startHeartbeat } from './heartbeat';
import { buildSummarizePrompt, SUMMARIZER_SYSTEM_PROMPT } from '../src/compaction/prompts';
import { toActivityFailure } from '../src/model/failures';
import { modelConfigured } from '../src/runtime/activity-deps';
import { maxOutputTokensFor } from '../src/context/context-window';
import { summarizationOverheadTokens } from '../src/compaction/summary-budget';
import { FailureTypes } from '../src/protocol';
import { splitTextToFit } from '../src/compaction/split-text-to-fit';
import { effectiveWindow, learnFromOverflow, type WindowSession } from './model-window';
import type { ModelRequest } from '../src/model/model-client';
import type { SummarizerBilling } from '../src/store/compactions-repo';

/** What a summarizer call sends besides the model and the output size. */
export type SummaryRequest = Pick<ModelRequest, 'system' | 'messages' | 'tools' | 'promptCaching' | 'cachedPrefixMessages'>;

const NOTHING_BILLED: SummarizerBilling = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };

/** Overflow answers a summarizer call may get before it gives up (each one lowers the learned window). */
const MAX_OVERFLOW_RETRIES = 3;
/** Below this room for conversation text, summarizing is pointless: the workflow writes the extractive summary. */
const MIN_SUMMARY_ROOM_TOKENS = 1_000;

/** One agent's summarizer: its compaction model when it has one, else its chat model. */
export interface AgentSummarizer {
  /** False when the agent has no model at all: compaction writes the extractive summary. */
  readonly available: boolean;
  readonly modelName: string;
  /** The summarizer's window: its own learned limit, never above the chat window (the summary must fit there too). */
  window(): Promise<number>;
  /** One call, heartbeating while the reply streams. Model errors become retryable or not per their kind. */
  call(prompt: string): Promise<string>;
  /** One call of a whole request (the summarizer's model and output size), its reply's text. */
  callRequest(request: SummaryRequest): Promise<string>;
  /**
   * Summarizes `text` within the summarizer's window: text that does not fit is split at message
   * boundaries, each piece summarized (the previous summary goes with the first), and the partial
   * summaries merged the same way. A "prompt is too long" answer lowers the learned window and tries
   * again smaller, so a provider whose real window is below Keel's setting still gets a model summary.
   */
  summarizeFitting(text: string, previousSummary: string | undefined, instructions: string): Promise<string>;
  countTokens(text: string): number;
  /** The summary's max_tokens in a window of `size`. */
  outputTokens(size: number): number;
}

/** Checks the spend limit before each summarizer call and counts each call after it (see summarizer-spend.ts). */
export interface SummarizerSpendGuard {
  /** Throws (non-retryable) when the limit is reached. */
  beforeCall(): Promise<void>;
  /** Every call counts with what it was billed, a failed one with 0 tokens (its usage is unknown). */
  afterCall(billing: SummarizerBilling, model: string): Promise<void>;
}

export interface SummarizerOptions {
  /** Another model of the same endpoint (`keel compactions rerun --model`). */
  readonly model?: string;
  readonly spend?: SummarizerSpendGuard;
  /** The session being compacted: its estimate scale sizes the prompts, and an overflow teaches it. */
  readonly session?: WindowSession;
}

/** The summarizer of the agent whose deps these are. */
export function agentSummarizer(deps: ActivityDeps, options: SummarizerOptions = {}): AgentSummarizer {
  const client = deps.compactionModel ?? deps.model;
  const modelName = options.model ?? deps.config.compactionModel ?? deps.config.model;
  const countTokens = (text: string) => deps.estimate({ role: 'user', content: text });
  const window = async () => Math.min(await effectiveWindow(deps, modelName, options.session), await effectiveWindow(deps, deps.config.model, options.session));

  // The summary's max_tokens: the default output, held to half the reserve of the window it must fit.
  const outputTokens = (size: number) => maxOutputTokensFor(size, { reserveTokens: deps.config.reserveTokens, reserveTokensFloor: deps.config.reserveTokensFloor });

  async function call(prompt: string): Promise<string> {
    return callRequest({ system: SUMMARIZER_SYSTEM_PROMPT, messages: [{ role: 'user', content: prompt }] });
  }

  async function callRequest(request: SummaryRequest): Promise<string> {
    await options.spend?.beforeCall();
    const maxTokens = outputTokens(await window());
    const heartbeat = startHeartbeat();
    try {
      const reply = await client
        .complete({ ...request, model: modelName, maxTokens }, { signal: Context.current().cancellationSignal, onEvent: () => heartbeat.beat() })
        .catch(async (err: unknown) => {
          await options.spend?.afterCall(NOTHING_BILLED, modelName);
          throw err;
        });
      const { usage } = reply;
      await options.spend?.afterCall({ input: usage.input, cacheRead: usage.cacheRead ?? 0, cacheWrite: usage.cacheWrite ?? 0, output: usage.output }, modelName);
      return reply.content
        .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
        .map((b) => b.text)
        .join('')
        .trim();
    } finally {
      heartbeat.stop();
    }
  }

  async function summarizeFitting(text: string, previousSummary: string | undefined, instructions: string, depth = 0): Promise<string> {
    for (let overflows = 0; ; overflows++) {
      const size = await window();
      const scaffolding = countTokens(`${SUMMARIZER_SYSTEM_PROMPT}\n${instructions}\n${previousSummary ?? ''}`) + summarizationOverheadTokens(size);
      const room = size - outputTokens(size) - scaffolding;
      if (room < MIN_SUMMARY_ROOM_TOKENS) {
        throw ApplicationFailure.nonRetryable(`the summarizer's window (${size} tokens) leaves no room for conversation text`, FailureTypes.SummarizationFailed);
      }
      const pieces = splitTextToFit(text, room, countTokens);
      if (pieces.length > 1 && depth < 3) {
        const partials: string[] = [];
        for (const [i, piece] of pieces.entries()) partials.push(await summarizeFitting(piece, i === 0 ? previousSummary : undefined, instructions, depth + 1));
        return summarizeFitting(partials.map((p, i) => `### Part ${i + 1} of ${partials.length}\n${p}`).join('\n\n'), undefined, instructions, depth + 1);
      }
      const prompt = buildSummarizePrompt(text, previousSummary, instructions);
      try {
        return await call(prompt);
      } catch (err) {
        const learned = overflows < MAX_OVERFLOW_RETRIES ? await learnFromOverflow(deps, modelName, err, countTokens(prompt), options.session).catch(() => undefined) : undefined;
        if (learned !== undefined) continue;
        throw toActivityFailure(err);
      }
    }
  }

  return {
    available: Boolean(deps.compactionModel) || modelConfigured(deps.config),
    modelName,
    window,
    call,
    callRequest,
    summarizeFitting: (text, previousSummary, instructions) => summarizeFitting(text, previousSummary, instructions),
    countTokens,
    outputTokens,
  };
}
