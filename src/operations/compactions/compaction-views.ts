/** The views of the compaction operations: list, show, retry, revert, rerun, compare. */
import { z } from 'zod';
import 'zod-openapi';
import { count } from '../view-fields';

const nullableCount = count.nullable();
/** A `compactions` row (JSON-friendly: ISO times). */
export const compactionView = z
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
        estimated: z.literal(true).exactOptional(),
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

/** A `compactions` row (JSON-friendly: ISO times). */
export type CompactionView = z.infer<typeof compactionView>;

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

/** `POST /v1/compactions/{id}/revert` and `…/rerun`: the new compaction record, once the edit is done. */
export const compactionEdit = z
  .strictObject({
    compaction: compactionView,
    workflowId: z.string(),
    laterCompactionsUndone: count.optional().meta({ description: 'A revert: the later compactions it undid too' }),
  })
  .meta({ id: 'CompactionEdit' });

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
