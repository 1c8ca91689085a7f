/**
 * Fields shared by the operations' views (zod schemas; the types come from `z.infer`): a count, the
 * context pressure, a running turn's progress, the prompt cache and what a context is made of.
 */
import { z } from 'zod';
import 'zod-openapi';

/** A whole number of tokens, calls or rows. */
export const count = z.number().int().nonnegative();

/** Context pressure: the highest of 50, 70, 85 % of the window reached. */
export const pressure = z
  .enum(['normal', '50', '70', '85'])
  .meta({ description: 'Context pressure: the highest of 50, 70, 85 % of the window reached' });

/** A running turn's progress (status, and the events stream's `progress` event). */
export const runningTurn = z
  .strictObject({
    turn: count,
    modelCalls: count,
    tokens: count,
    budget: z.strictObject({ maxModelCalls: count.nullable(), maxTokens: count.nullable() }),
    compactions: count,
    toolCalls: count,
  })
  .meta({ id: 'RunningTurn' });

/** A compaction running beside the session: which, why, for how long, and how long a turn has waited for it. */
export const backgroundCompaction = z
  .strictObject({
    compactionId: z.string(),
    trigger: z.string(),
    startedAt: z.iso.datetime(),
    runningMs: count,
    turnWaitingMs: count.optional(),
  })
  .meta({ id: 'BackgroundCompaction' });

/** The session's prompt tokens by cache use, and the share read from the cache. */
export const promptCache = z.strictObject({
  inputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  hitRatePercent: z.number().nonnegative(),
  // Exactly optional: the protocol's `estimated?: true` is absent or true, never undefined.
  estimated: z
    .literal(true)
    .exactOptional()
    .meta({ description: "Some figures are Keel's own count: the model server reported no usage for a call" }),
});

/** What a model call's context was made of. */
export const contextSplit = z.strictObject({
  systemTokens: count,
  bootstrapTokens: count,
  toolTokens: count,
  historyTokens: count,
});
