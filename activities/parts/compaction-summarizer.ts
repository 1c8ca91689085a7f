import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { ActivityDeps } from '../../src/runtime/deps';
import { startHeartbeat } from './heartbeat';
import { buildSummarizePrompt, SUMMARIZER_SYSTEM_PROMPT } from '../../src/compaction/prompts';
import { toActivityFailure } from '../../src/model/failures';
import { modelConfigured } from '../../src/runtime/activity-deps';
import { maxOutputTokensFor } from '../../src/context/context-window';
import { smallestSummaryWindow, summaryRoomTokens } from '../../src/compaction/summary-window';
import { DEFAULTS } from '../../src/config/defaults';
import { FailureTypes } from '../../src/protocol';
import { splitTextToFit } from '../../src/compaction/split-text-to-fit';
import { effectiveWindow, learnFromOverflow, type WindowSession } from './model-window';
import type { ReceivedReplies } from './received-replies';
import type { ModelClient, ModelRequest, ModelResponse } from '../../src/model/model-client';
import type { TokenUsage } from '../../src/protocol';
import { NO_USAGE, usageOfReply } from '../../src/turn/token-usage';

/** What a summarizer call sends besides the model and the output size. */
export type SummaryRequest = Pick<
  ModelRequest,
  'system' | 'messages' | 'tools' | 'promptCaching' | 'cachedPrefixMessages'
>;

/** Overflow answers a summarizer call may get before it gives up (each one lowers the learned window). */
const MAX_OVERFLOW_RETRIES = 3;

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
  afterCall(billing: TokenUsage, model: string): Promise<void>;
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
  const summarizer = new Summarizer(deps, options);
  // The activity returns what these give to Temporal: the replies its attempts kept are no longer needed.
  const forgettingReplies = async (work: Promise<string>): Promise<string> => {
    const summary = await work;
    options.replies?.forget(activityScope());
    return summary;
  };
  return {
    available: Boolean(deps.compactionModel) || modelConfigured(deps.config),
    modelName: summarizer.modelName,
    window: () => summarizer.window(),
    call: (prompt) => forgettingReplies(summarizer.call(prompt)),
    callRequest: (summaryRequest) => forgettingReplies(summarizer.callRequest(summaryRequest)),
    summarizeFitting: (text, previousSummary, instructions) =>
      forgettingReplies(summarizer.summarizeFitting(text, previousSummary, instructions)),
    countTokens: (text) => summarizer.countTokens(text),
    outputTokens: (size) => summarizer.outputTokens(size),
  };
}

/** An agent's summarizer calls (see {@link AgentSummarizer}), before its activity forgets the replies it kept. */
class Summarizer {
  readonly modelName: string;
  private readonly client: ModelClient;

  constructor(
    private readonly deps: ActivityDeps,
    private readonly options: SummarizerOptions,
  ) {
    this.client = deps.compactionModel ?? deps.model;
    this.modelName = options.model ?? deps.config.compactionModel ?? deps.config.model;
  }

  countTokens(text: string): number {
    return this.deps.estimate({ role: 'user', content: text });
  }

  async window(): Promise<number> {
    return Math.min(
      await effectiveWindow(this.deps, this.modelName, this.options.session),
      await effectiveWindow(this.deps, this.deps.config.model, this.options.session),
    );
  }

  /** The summary's max_tokens: the default output, held to half the reserve of the window it must fit. */
  outputTokens(size: number): number {
    return maxOutputTokensFor(size, this.reserveSettings());
  }

  call(prompt: string): Promise<string> {
    return this.callRequest({ system: SUMMARIZER_SYSTEM_PROMPT, messages: [{ role: 'user', content: prompt }] });
  }

  /** One call, or the reply an earlier attempt of this activity received for the same request (its spend counted once). */
  async callRequest(summaryRequest: SummaryRequest): Promise<string> {
    const { replies, spend } = this.options;
    const scope = activityScope();
    const part = requestKey(this.modelName, summaryRequest);
    const kept = replies?.get(scope, part);
    if (kept)
      log.info('summarizer reply received by an earlier attempt; not requested again', { recorded: kept.recorded });
    const reply = kept?.reply ?? (await this.request(summaryRequest));
    if (kept?.recorded) return replyText(reply);
    replies?.keep(scope, part, reply);
    await spend?.afterCall(usageOfReply(reply.usage), this.modelName);
    replies?.keep(scope, part, reply, true);
    return replyText(reply);
  }

  /** The model call itself, within the spend limit, heartbeating while the reply streams. */
  private async request(summaryRequest: SummaryRequest): Promise<ModelResponse> {
    const { spend } = this.options;
    await spend?.beforeCall();
    const maxTokens = this.outputTokens(await this.window());
    const heartbeat = startHeartbeat();
    try {
      return await this.client
        .complete(
          { ...summaryRequest, model: this.modelName, maxTokens },
          { signal: Context.current().cancellationSignal },
        )
        .catch(async (err: unknown) => {
          await spend?.afterCall(NO_USAGE, this.modelName);
          throw err;
        });
    } finally {
      heartbeat.stop();
    }
  }

  /** See {@link AgentSummarizer.summarizeFitting}; `depth` bounds the splitting. */
  async summarizeFitting(
    text: string,
    previousSummary: string | undefined,
    instructions: string,
    depth = 0,
  ): Promise<string> {
    for (let overflows = 0; ; overflows++) {
      const room = await this.roomForText(instructions, previousSummary);
      const pieces = splitTextToFit(text, room, (t) => this.countTokens(t));
      if (pieces.length > 1 && depth < 3) return this.summarizePieces(pieces, previousSummary, instructions, depth);
      const prompt = buildSummarizePrompt(text, previousSummary, instructions);
      try {
        return await this.call(prompt);
      } catch (err) {
        const learned =
          overflows < MAX_OVERFLOW_RETRIES
            ? await learnFromOverflow(
                this.deps,
                this.modelName,
                err,
                this.countTokens(prompt),
                this.options.session,
              ).catch(() => undefined)
            : undefined;
        if (learned !== undefined) continue;
        throw toActivityFailure(err);
      }
    }
  }

  /** Tokens left for conversation text in the window, after the reply, the prompt's scaffolding and the overhead. */
  private async roomForText(instructions: string, previousSummary: string | undefined): Promise<number> {
    const size = await this.window();
    const promptTokens = this.countTokens(`${SUMMARIZER_SYSTEM_PROMPT}\n${instructions}\n${previousSummary ?? ''}`);
    const reserve = this.reserveSettings();
    const room = summaryRoomTokens(size, promptTokens, reserve);
    if (room < DEFAULTS.minSummaryRoomTokens) {
      throw ApplicationFailure.nonRetryable(
        `the summarizer's window (${size} tokens) leaves ${Math.max(0, room)} tokens for conversation text, under the ${DEFAULTS.minSummaryRoomTokens} a model summary needs: a window of ${smallestSummaryWindow(promptTokens, reserve)} tokens would do (contextWindow in keel.config.json, or the server's context size)`,
        FailureTypes.SummarizationFailed,
      );
    }
    return room;
  }

  private reserveSettings() {
    return { reserveTokens: this.deps.config.reserveTokens, reserveTokensFloor: this.deps.config.reserveTokensFloor };
  }

  /** Each piece summarized (the previous summary goes with the first), then the partial summaries merged the same way. */
  private async summarizePieces(
    pieces: readonly string[],
    previousSummary: string | undefined,
    instructions: string,
    depth: number,
  ): Promise<string> {
    const partials: string[] = [];
    for (const [i, piece] of pieces.entries())
      partials.push(await this.summarizeFitting(piece, i === 0 ? previousSummary : undefined, instructions, depth + 1));
    return this.summarizeFitting(
      partials.map((p, i) => `### Part ${i + 1} of ${partials.length}\n${p}`).join('\n\n'),
      undefined,
      instructions,
      depth + 1,
    );
  }
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
