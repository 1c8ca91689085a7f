/** The views of the session operations: `keel sessions`, `keel status` and their HTTP twins. */
import { z } from 'zod';
import 'zod-openapi';
import { backgroundCompaction, contextSplit, count, pressure, promptCache, runningTurn } from '../view-fields';

/** One session as `keel sessions` lists it. */
export const sessionListing = z
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

/** One session as `keel sessions` lists it. */
export type SessionListing = z.infer<typeof sessionListing>;

/** `GET /v1/sessions`: `keel sessions --json`. */
export const sessionsList = z.strictObject({ sessions: z.array(sessionListing) }).meta({ id: 'SessionsList' });

/** `GET /v1/sessions/{sessionKey}`: `keel status --json`. */
export const sessionStatusReport = z
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
    backgroundCompaction: backgroundCompaction.optional().meta({
      description:
        'A compaction running beside the session (turns go on meanwhile), and how long a turn has waited for it',
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

/** `keel status --json` (and `GET /v1/sessions/{key}`): the workflow's status with what the database adds. */
export type SessionStatusReport = z.infer<typeof sessionStatusReport>;

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

/** Points of the session chart, by transcript position. */
export type ContextSeries = z.infer<typeof contextSeries>;
