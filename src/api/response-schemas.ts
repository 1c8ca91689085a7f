/**
 * The HTTP API's answers as zod schemas, for /openapi.json. Each mirrors a type the CLI prints with
 * `--json` (`SessionStatus`, `SessionListing`, `CompactionView`, …); the HTTP tests validate every
 * response against the generated document, so a field added to one of those types without its schema
 * here fails them.
 */
import { z } from 'zod';
import 'zod-openapi';

const count = z.number().int().nonnegative();
const pressure = z
  .enum(['normal', '50', '70', '85'])
  .meta({ description: 'Context pressure: the highest of 50, 70, 85 % of the window reached' });

/** A turn's token usage as the provider reported it. */
const usage = z
  .strictObject({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count.optional(),
    cacheWriteTokens: count.optional(),
  })
  .meta({ id: 'Usage' });

/** A running turn's progress (status, and the events stream's `progress` event). */
const runningTurn = z
  .strictObject({
    turn: count,
    modelCalls: count,
    tokens: count,
    budget: z.strictObject({ maxModelCalls: count.nullable(), maxTokens: count.nullable() }),
    compactions: count,
    toolCalls: count,
  })
  .meta({ id: 'RunningTurn' });

/** The data of the events stream's `progress` event: the running turn moved on. */
export const progressEvent = runningTurn;

/** Why a turn stopped before the model finished: its run budget, with the figures reached. */
const stopReason = z
  .strictObject({
    kind: z.literal('budget'),
    limit: z.enum(['modelCalls', 'tokens']),
    modelCalls: count,
    maxModelCalls: count.nullable(),
    tokens: count,
    maxTokens: count.nullable(),
  })
  .meta({
    id: 'StopReason',
    description: 'The turn reached its run budget: the reply is its report; another message continues the run',
  });

/** `POST …/messages`, and the data of the stream's `reply` event. */
export const messageReply = z
  .strictObject({
    reply: z.string().meta({ description: 'The assistant’s reply; empty when it was silent (NO_REPLY)' }),
    silent: z.boolean(),
    sessionKey: z.string(),
    requestId: z.string(),
    turn: z.number().int().positive().meta({ description: '1-based turn number over the session’s life' }),
    usage,
    modelCalls: count,
    toolCalls: z
      .array(
        z.strictObject({
          id: z.string().optional(),
          name: z.string(),
          isError: z.boolean(),
          error: z.string().optional().meta({ description: 'An error result’s reason, its first line' }),
        }),
      )
      .optional()
      .meta({ description: 'The turn’s tool calls in order; a long run lists its most recent ones' }),
    toolCallsOmitted: count.optional().meta({ description: 'Earlier tool calls left out of toolCalls' }),
    compactions: count.optional().meta({ description: 'Compactions the turn ran while it worked' }),
    stopReason: stopReason.optional(),
  })
  .meta({ id: 'MessageReply' });

/** The data of the stream's `text` events. */
export const textEvent = z
  .strictObject({ delta: z.string() })
  .meta({ id: 'TextEvent', description: 'Reply text as the model writes it' });

/** The data of a stream's `tool` event: a tool call of the turn has run. */
export const toolEvent = z
  .strictObject({ id: z.string(), name: z.string(), isError: z.boolean() })
  .meta({ id: 'ToolEvent', description: 'A tool call of the turn has run, with its outcome' });

/** The data of a stream's `restart` event: a model call was retried, what was shown is replaced. */
export const restartEvent = z
  .strictObject({ soFar: z.string() })
  .meta({ id: 'RestartEvent', description: 'A model call was retried: replace the text shown so far with `soFar`' });

/** The data of the events stream's `report` event. */
export const reportEvent = z
  .strictObject({
    requestId: z.string().meta({ description: 'The announce’s request id (`announce:<subagentId>:<key>`)' }),
    subagentId: z.string(),
    text: z.string().meta({ description: 'The subagent’s report as the session received it' }),
  })
  .meta({
    id: 'ReportEvent',
    description: 'A subagent reported back to the session (its answer follows as `announce`)',
  });

/** The data of the events stream's `announce` event. */
export const announceEvent = z
  .strictObject({
    requestId: z.string(),
    subagentId: z.string(),
    reply: z
      .string()
      .nullable()
      .meta({ description: 'The session’s answer to its subagent’s report; null when it was silent' }),
    stopReason: stopReason.optional(),
  })
  .meta({ id: 'AnnounceEvent', description: 'A subagent reported back and the session answered, unasked' });

/** The data of the events stream's `system` event. */
export const systemEvent = z
  .strictObject({
    event: z
      .enum(['heartbeat', 'cron', 'exec_notice', 'bookkeeping'])
      .meta({ description: 'What ran the turn: the `event` its message was sent with' }),
    text: z.string().meta({ description: 'The event’s text, as the session received it' }),
    reply: z.string().nullable().meta({ description: 'The session’s answer; null when it was silent' }),
    stopReason: stopReason.optional(),
  })
  .meta({
    id: 'SystemEvent',
    description: 'A system event (a cron job, a heartbeat, a hook) ran a turn and the session answered',
  });

/** The session's prompt tokens by cache use, and the share read from the cache. */
const promptCache = z.strictObject({
  inputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  hitRatePercent: z.number().nonnegative(),
  estimated: z
    .literal(true)
    .optional()
    .meta({ description: "Some figures are Keel's own count: the model server reported no usage for a call" }),
});

/** What a model call's context was made of. */
const contextSplit = z.strictObject({
  systemTokens: count,
  bootstrapTokens: count,
  toolTokens: count,
  historyTokens: count,
});

/** `GET /v1/sessions/{sessionKey}`: `keel status --json`. */
export const sessionStatus = z
  .strictObject({
    agentId: z.string(),
    sessionKey: z.string(),
    turnsCompleted: count,
    queuedTurns: count,
    lastEntryId: z.string().nullable(),
    contextTokens: count,
    contextWindow: count,
    percentUsed: z.number().nonnegative(),
    pressure,
    compactionCount: count,
    lastCompactionId: z.string().nullable(),
    configuredContextWindow: count.optional(),
    promptCache: promptCache.optional(),
    model: z.string().optional(),
    contextSplit: contextSplit.optional(),
    spawnAdvice: z.strictObject({ level: z.enum(['normal', 'elevated', 'high', 'critical']), instruction: z.string() }),
    autoCompaction: z
      .union([
        z.strictObject({ state: z.literal('paused') }),
        z.strictObject({ state: z.literal('held'), untilTokens: count }),
      ])
      .optional(),
    uncollectedRequestIds: z.array(z.string()).optional(),
    pendingApprovals: z
      .array(
        z.strictObject({
          approvalId: z.string(),
          toolName: z.string(),
          toolCallId: z.string(),
          deadline: z.iso.datetime(),
        }),
      )
      .optional()
      .meta({ description: 'Tool calls the running turn waits on a person to approve' }),
    runningTurn: runningTurn.optional().meta({
      description: 'The turn running now: its model calls and tokens against its budget, and its compactions so far',
    }),
    turns: count
      .optional()
      .meta({ description: 'User messages of the current transcript (as `GET /v1/sessions` counts them)' }),
    compactionNote: z.string().optional(),
    compactionBilling: z.string().optional(),
    windowNote: z.string().optional(),
    workflowNote: z
      .string()
      .optional()
      .meta({ description: 'Set when the figures come from the database: the session never ran in Keel (imported)' }),
    recall: z.string().optional().meta({
      description: 'How history_search recalls: hybrid with the entries that have vectors, or keywords only and why',
    }),
  })
  .meta({ id: 'SessionStatus' });

const sessionListing = z
  .strictObject({
    sessionKey: z.string(),
    agentId: z.string(),
    sessionId: z.string(),
    updatedAt: z.iso.datetime(),
    turns: count,
    contextTokens: count,
    contextWindow: count,
    estimateScale: z.number().positive().optional(),
    percentUsed: z.number().nonnegative(),
    pressure,
    compactions: count,
    autoCompactionPaused: z.boolean(),
    model: z.string(),
    modelOverride: z.boolean(),
    earlierSessionIds: count,
    contextSplit: contextSplit
      .optional()
      .meta({ description: 'The last turn’s system, workspace and tools; the history is the rest of `contextTokens`' }),
    promptCache: promptCache
      .optional()
      .meta({ description: 'Prompt tokens of the current session id by cache use (as `keel status` reports them)' }),
  })
  .meta({ id: 'SessionListing' });

/** `GET /v1/sessions`: `keel sessions --json`. */
export const sessionsList = z.strictObject({ sessions: z.array(sessionListing) }).meta({ id: 'SessionsList' });

/** `POST …/compact`: the compaction's result. */
export const compactionResult = z
  .strictObject({
    compactionId: z.string(),
    status: z.enum(['running', 'succeeded', 'failed', 'skipped']),
    degraded: z.boolean(),
    tokensBefore: count,
    tokensAfter: count,
    firstKeptEntryId: z.string().nullable(),
    entryId: z.string().nullable(),
    skip: z
      .union([
        z.strictObject({ reason: z.literal('nothing-to-summarize') }),
        z.strictObject({ reason: z.literal('no-gain'), wouldBeTokens: count }),
      ])
      .optional()
      .meta({
        description:
          'Why a skipped compaction wrote nothing: nothing before the kept tail, or a summary that would not make the context smaller',
      }),
  })
  .meta({ id: 'CompactionResult' });

const nullableCount = count.nullable();
const compactionView = z
  .strictObject({
    id: z.string(),
    agentId: z.string(),
    sessionKey: z.string(),
    sessionId: z.string(),
    trigger: z.string(),
    status: z.string(),
    degraded: z.boolean(),
    error: z.string().nullable(),
    attempts: count,
    tokensBefore: nullableCount,
    tokensAfter: nullableCount,
    firstKeptEntryId: z.string().nullable(),
    entryId: z.string().nullable(),
    retryOf: z.string().nullable(),
    revertOf: z.string().nullable(),
    rerunOf: z.string().nullable(),
    summarizerModel: z.string().nullable(),
    summarizerCalls: count,
    summarizerTokens: count,
    summarizerBilling: z
      .strictObject({
        input: count,
        cacheRead: count,
        cacheWrite: count,
        output: count,
        estimated: z.literal(true).optional(),
      })
      .meta({
        description:
          "What its summarizer calls were billed, as the provider reported: uncached input, prompt-cache reads and writes, output; `estimated` when the server reported no usage and these are Keel's count",
      }),
    spendLimited: z.string().nullable(),
    workflowId: z.string().nullable(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
    retryCommand: z.string().optional(),
  })
  .meta({ id: 'Compaction' });

/** `GET /v1/compactions`: `keel compactions --json`. */
export const compactionsList = z
  .strictObject({
    compactions: z.array(compactionView),
    pausedSessions: z
      .array(z.strictObject({ agentId: z.string(), sessionKey: z.string(), consecutiveFailures: count }))
      .optional(),
  })
  .meta({ id: 'CompactionsList' });

/** `POST /v1/compactions/{id}/retry`: `keel compactions retry --json`. */
export const retryResult = z
  .strictObject({
    compactionId: z
      .string()
      .nullable()
      .meta({ description: 'The compaction being run: the new one, or the one already running' }),
    retryOf: z.string(),
    workflowId: z.string(),
    started: z
      .boolean()
      .meta({ description: 'False when a compaction of the session was already running (it was joined)' }),
  })
  .meta({ id: 'RetryResult' });

/** Every error: problem details (RFC 9457). */
export const problem = z
  .strictObject({
    type: z.string().meta({ description: 'A URN naming the kind of problem, e.g. `urn:keel:problem:invalid-request`' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: 'What is wrong and how to fix it' }),
    field: z.string().optional().meta({ description: 'The field, parameter, header or setting at fault' }),
    failureType: z
      .string()
      .optional()
      .meta({ description: 'A failed request: its failure type (`KeelModelUnavailable`, …)' }),
  })
  .meta({ id: 'Problem' });

/** `GET /v1/console/sessions`: a page of the fleet. */
export const fleetPage = z
  .strictObject({
    sessions: z.array(
      sessionListing
        .extend({
          failedCompactions: count.meta({ description: 'Failed or degraded compactions of the current session id' }),
        })
        .meta({ id: 'FleetSession' }),
    ),
    total: count.meta({ description: 'Sessions the filter matches, on every page' }),
    page: count,
    pageSize: count,
  })
  .meta({ id: 'FleetPage' });

const consoleEntry = z
  .strictObject({
    id: z.string(),
    seq: z.number().int(),
    type: z.string(),
    role: z.string().nullable(),
    createdAt: z.iso.datetime(),
    tokens: count.nullable(),
    text: z.string(),
    toolCalls: z.array(
      z.strictObject({ name: z.string(), arguments: z.string().meta({ description: 'The call’s arguments as JSON' }) }),
    ),
    toolName: z.string().optional(),
  })
  .meta({ id: 'ConsoleEntry' });

/** `GET /v1/sessions/{sessionKey}/transcript`: a page of the transcript. */
export const transcriptPage = z
  .strictObject({ entries: z.array(consoleEntry), total: count, page: count, pageSize: count })
  .meta({ id: 'TranscriptPage' });

/** `GET /v1/sessions/{sessionKey}/compactions`: the session's compactions with their summaries. */
export const sessionCompactions = z
  .strictObject({
    compactions: z.array(
      compactionView
        .extend({
          summary: z.string().nullable(),
          kept: z
            .strictObject({ identifiers: z.array(z.string()), decisions: z.array(z.string()) })
            .nullable()
            .meta({
              description:
                'What the summary preserved, read back as the next compaction reads it (null without a summary)',
            }),
        })
        .meta({ id: 'SessionCompaction' }),
    ),
  })
  .meta({ id: 'SessionCompactions' });

/** `GET /v1/console/overview`: the fleet's charts. */
export const fleetOverview = z
  .strictObject({
    pressure: z
      .array(count)
      .length(10)
      .meta({ description: 'Sessions per tenth of their window: [0] under 10 %, … [9] 90 % and over' }),
    compactionsPerHour: z
      .array(
        z.strictObject({
          hour: z.iso.datetime(),
          total: count,
          failed: count.meta({ description: 'Failed or degraded' }),
        }),
      )
      .meta({ description: 'The last 24 hours, oldest first' }),
  })
  .meta({ id: 'FleetOverview' });

/** `GET /v1/sessions/{sessionKey}/context-series`: the session chart's data. */
export const contextSeries = z
  .strictObject({
    points: z
      .array(z.strictObject({ seq: z.number().int(), contextTokens: count }))
      .meta({ description: 'Per model reply: the context tokens its call sent (input, cached and uncached)' }),
    compactions: z
      .array(z.strictObject({ seq: z.number().int(), tokensBefore: count }))
      .meta({ description: 'Per compaction entry: where it cut' }),
    prunes: z
      .array(
        z.strictObject({
          seq: z.number().int(),
          contextTokens: count,
          toolResults: count,
          chars: count,
          providerTokens: count,
        }),
      )
      .meta({
        description:
          'Per reply whose call went without tool output: results Keel’s engine cleared (chars) and the provider’s context edits cleared (tokens)',
      }),
  })
  .meta({ id: 'ContextSeries' });

/** `POST /v1/compactions/{id}/revert` and `…/rerun`: the new compaction record, once the edit is done. */
export const compactionEdit = z
  .strictObject({
    compaction: compactionView,
    workflowId: z.string(),
    laterCompactionsUndone: count.optional().meta({ description: 'A revert: the later compactions it undid too' }),
  })
  .meta({ id: 'CompactionEdit' });

const subagentListing = z
  .strictObject({
    id: z.string(),
    label: z.string().nullable(),
    status: z.string(),
    mode: z.string(),
    depth: count,
    agentId: z.string(),
    parentSessionKey: z.string(),
    childSessionKey: z.string(),
    task: z.string(),
    createdAt: z.iso.datetime(),
    endedAt: z.iso.datetime().nullable(),
    result: z.string().nullable(),
  })
  .meta({ id: 'Subagent' });

/** `GET /v1/sessions/{sessionKey}/subagents`: `keel subagents --json` of the session's agent. */
export const subagentsList = z.strictObject({ subagents: z.array(subagentListing) }).meta({ id: 'SubagentsList' });

/** `POST /v1/subagents/{id}/kill`. */
export const killResult = z
  .strictObject({ id: z.string(), killed: z.boolean(), message: z.string() })
  .meta({ id: 'KillResult' });

/** `POST /v1/subagents/{id}/steer`. */
export const steerResult = z
  .strictObject({ id: z.string(), sent: z.boolean(), message: z.string() })
  .meta({ id: 'SteerResult' });

const approvalListing = z
  .strictObject({
    id: z.string(),
    agentId: z.string(),
    sessionKey: z.string(),
    toolName: z.string(),
    toolCallId: z.string(),
    arguments: z.record(z.string(), z.unknown()).meta({ description: 'The call’s arguments, redacted' }),
    approvers: z.array(z.string()).nullable(),
    deadline: z.iso.datetime(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'PendingApproval' });

/** `GET /v1/approvals`: `keel approvals --json`. */
export const approvalsList = z.strictObject({ approvals: z.array(approvalListing) }).meta({ id: 'ApprovalsList' });

/** `POST /v1/approvals/{id}`: the call's outcome, the first decision's when it was decided before. */
export const approvalOutcome = z
  .strictObject({
    approvalId: z.string(),
    status: z.enum(['approved', 'denied']),
    decidedBy: z.string().optional(),
    note: z.string().optional(),
    reason: z.string().optional(),
    decidedAt: z.iso.datetime(),
  })
  .meta({ id: 'ApprovalOutcome' });
