import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { ActivityDeps } from '../../src/runtime/deps';
import { startHeartbeat } from './heartbeat';
import { buildSummarizePrompt, SUMMARIZER_SYSTEM_PROMPT } from '../../src/compaction/prompts';
import { toActivityFailure } from '../../src/model/failures';
import { modelConfigured } from '../../src/runtime/activity-deps';
import { maxOutputTokensFor } from '../../src/context/context-window';
import { summarizationOverheadTokens } from '../../src/compaction/summary-budget';
import { FailureTypes } from '../../src/protocol';
import { splitTextToFit } from '../../src/compaction/split-text-to-fit';
import { effectiveWindow, learnFromOverflow, type WindowSession } from './model-window';
import type { ReceivedReplies } from './received-replies';
import type { ModelRequest, ModelResponse } from '../../src/model/model-client';
import type { SummarizerBilling } from '../../src/store/compactions-repo';

/** What a summarizer call sends besides the model and the output size. */
export type SummaryRequest = Pick<
  ModelRequest,
  'system' | 'messages' | 'tools' | 'promptCaching' | 'cachedPrefixMessages'
>;

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
  /**
   * The worker's memo of replies received and not stored yet: a retry of this activity (its spend
   * write failed, a later piece failed) reuses the replies its earlier attempts received.
   */
  readonly replies?: ReceivedReplies;
}

/** The summarizer of the agent whose deps these are. */
export function agentSummarizer(deps: ActivityDeps, options: SummarizerOptions = {}): AgentSummarizer {
  const client = deps.compactionModel ?? deps.model;
  const modelName = options.model ?? deps.config.compactionModel ?? deps.config.model;
  const countTokens = (text: string) => deps.estimate({ role: 'user', content: text });
  const window = async () =>
    Math.min(
      await effectiveWindow(deps, modelName, options.session),
      await effectiveWindow(deps, deps.config.model, options.session),
    );

  // The summary's max_tokens: the default output, held to half the reserve of the window it must fit.
  const outputTokens = (size: number) =>
    maxOutputTokensFor(size, {
      reserveTokens: deps.config.reserveTokens,
      reserveTokensFloor: deps.config.reserveTokensFloor,
    });

  async function call(prompt: string): Promise<string> {
    return callRequest({ system: SUMMARIZER_SYSTEM_PROMPT, messages: [{ role: 'user', content: prompt }] });
  }

  /** One call, or the reply an earlier attempt of this activity received for the same request (its spend counted once). */
  async function callRequest(summaryRequest: SummaryRequest): Promise<string> {
    const scope = activityScope();
    const part = requestKey(modelName, summaryRequest);
    const kept = options.replies?.get(scope, part);
    if (kept)
      log.info('summarizer reply received by an earlier attempt; not requested again', { recorded: kept.recorded });
    const reply = kept?.reply ?? (await request(summaryRequest));
    if (kept?.recorded) return replyText(reply);
    options.replies?.keep(scope, part, reply);
    const { usage } = reply;
    await options.spend?.afterCall(
      { input: usage.input, cacheRead: usage.cacheRead ?? 0, cacheWrite: usage.cacheWrite ?? 0, output: usage.output },
      modelName,
    );
    options.replies?.keep(scope, part, reply, true);
    return replyText(reply);
  }

  /** The model call itself, within the spend limit, heartbeating while the reply streams. */
  async function request(summaryRequest: SummaryRequest): Promise<ModelResponse> {
    await options.spend?.beforeCall();
    const maxTokens = outputTokens(await window());
    const heartbeat = startHeartbeat();
    try {
      return await client
        .complete(
          { ...summaryRequest, model: modelName, maxTokens },
          { signal: Context.current().cancellationSignal, onEvent: () => heartbeat.beat() },
        )
        .catch(async (err: unknown) => {
          await options.spend?.afterCall(NOTHING_BILLED, modelName);
          throw err;
        });
    } finally {
      heartbeat.stop();
    }
  }

  async function summarizeFitting(
    text: string,
    previousSummary: string | undefined,
    instructions: string,
    depth = 0,
  ): Promise<string> {
    for (let overflows = 0; ; overflows++) {
      const size = await window();
      const scaffolding =
        countTokens(`${SUMMARIZER_SYSTEM_PROMPT}\n${instructions}\n${previousSummary ?? ''}`) +
        summarizationOverheadTokens(size);
      const room = size - outputTokens(size) - scaffolding;
      if (room < MIN_SUMMARY_ROOM_TOKENS) {
        throw ApplicationFailure.nonRetryable(
          `the summarizer's window (${size} tokens) leaves no room for conversation text`,
          FailureTypes.SummarizationFailed,
        );
      }
      const pieces = splitTextToFit(text, room, countTokens);
      if (pieces.length > 1 && depth < 3) {
        const partials: string[] = [];
        for (const [i, piece] of pieces.entries())
          partials.push(await summarizeFitting(piece, i === 0 ? previousSummary : undefined, instructions, depth + 1));
        return summarizeFitting(
          partials.map((p, i) => `### Part ${i + 1} of ${partials.length}\n${p}`).join('\n\n'),
          undefined,
          instructions,
          depth + 1,
        );
      }
      const prompt = buildSummarizePrompt(text, previousSummary, instructions);
      try {
        return await call(prompt);
      } catch (err) {
        const learned =
          overflows < MAX_OVERFLOW_RETRIES
            ? await learnFromOverflow(deps, modelName, err, countTokens(prompt), options.session).catch(() => undefined)
            : undefined;
        if (learned !== undefined) continue;
        throw toActivityFailure(err);
      }
    }
  }

  /** The activity returns its result to Temporal: the replies its attempts kept are no longer needed. */
  async function forgettingReplies(work: Promise<string>): Promise<string> {
    const summary = await work;
    options.replies?.forget(activityScope());
    return summary;
  }

  return {
    available: Boolean(deps.compactionModel) || modelConfigured(deps.config),
    modelName,
    window,
    call: (prompt) => forgettingReplies(call(prompt)),
    callRequest: (summaryRequest) => forgettingReplies(callRequest(summaryRequest)),
    summarizeFitting: (text, previousSummary, instructions) =>
      forgettingReplies(summarizeFitting(text, previousSummary, instructions)),
    countTokens,
    outputTokens,
  };
}

/**
 * The running activity, the same in each of its attempts: chunks of one compaction run as parallel
 * activities, so each keeps and forgets its own replies.
 */
function activityScope(): string {
  const { workflowExecution: run, activityId } = Context.current().info;
  return `summarizer:${run?.workflowId ?? ''}:${run?.runId ?? ''}:${activityId}`;
}

/** A summarizer call's identity within its activity: the same model and request are the same call. */
function requestKey(model: string, summaryRequest: SummaryRequest): string {
  return createHash('sha256').update(model).update('\0').update(JSON.stringify(summaryRequest)).digest('base64url');
}

/** The reply's text, as the summary is used. */
function replyText(reply: ModelResponse): string {
  return reply.content
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('')
    .trim();
}
