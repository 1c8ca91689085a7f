/**
 * The HTTP API's own answers as zod schemas, for /openapi.json: a turn's reply, the streams' events,
 * a compaction's result and problems. What an operation returns (sessions, compactions, approvals,
 * subagents, the fleet, transcripts) is its view in src/operations, the same schema its functions'
 * types come from; the HTTP tests validate every response against the generated document.
 */
import { z } from 'zod';
import 'zod-openapi';
import { count, runningTurn } from '../operations/view-fields';
import { thinkingLevelSchema } from '../config/setting-schemas';

/** A turn's token usage as the provider reported it. */
const usage = z
  .strictObject({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count.optional(),
    cacheWriteTokens: count.optional(),
  })
  .meta({ id: 'Usage' });

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

/** A session's thinking level in force (`GET`/`POST /v1/sessions/{sessionKey}/thinking`). */
export const sessionThinking = z
  .object({
    agentId: z.string(),
    sessionKey: z.string(),
    level: thinkingLevelSchema,
    source: z.enum(['session', 'agent']).meta({ description: 'The session’s own level, or its agent’s' }),
  })
  .meta({ id: 'SessionThinking' });
