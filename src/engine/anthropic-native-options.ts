/**
 * Options of the `anthropic-native` engine (config `contextEngineOptions`), checked when the config
 * is parsed so a bad value names its field before any turn runs.
 */
import { z } from 'zod';
import type { ContextManagement } from '../model/model-client';

/** Anthropic's smallest compaction trigger, and its default. */
export const MIN_COMPACT_TRIGGER_TOKENS = 50_000;
const DEFAULT_COMPACT_TRIGGER_TOKENS = 150_000;

const clearToolUsesSchema = z.strictObject({
  triggerTokens: z.number().int().positive().optional(),
  keepToolUses: z.number().int().nonnegative().optional(),
  clearAtLeastTokens: z.number().int().positive().optional(),
  excludeTools: z.array(z.string().min(1)).optional(),
  clearToolInputs: z.boolean().optional(),
});

/** The fields, merged into `contextEngineOptions`' schema (other engines ignore them). */
export const nativeEngineOptionShape = {
  compactTriggerTokens: z
    .number()
    .int()
    .min(
      MIN_COMPACT_TRIGGER_TOKENS,
      `contextEngineOptions.compactTriggerTokens must be at least ${MIN_COMPACT_TRIGGER_TOKENS} (Anthropic's minimum compaction trigger)`,
    )
    .optional(),
  compactInstructions: z.string().min(1).optional(),
  /** true (the API's defaults), false (off), or the edit's settings. */
  clearToolUses: z
    .union([z.boolean(), clearToolUsesSchema], {
      message: 'use true, false or { triggerTokens, keepToolUses, clearAtLeastTokens, excludeTools, clearToolInputs }',
    })
    .optional(),
  /** Keep thinking of the last N assistant turns (or `all`); unset sends no thinking edit. */
  clearThinkingKeepTurns: z
    .union([z.number().int().positive(), z.literal('all')], { message: 'use a positive number of turns or "all"' })
    .optional(),
};

const nativeOptionsSchema = z.looseObject(nativeEngineOptionShape);

/** The engine's request edits from its options; throws naming the field when one is malformed. */
export function contextManagementFromOptions(options: unknown): ContextManagement {
  const parsed = nativeOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`contextEngineOptions.${issue.path.join('.')}: ${issue.message}`);
  }
  const o = parsed.data;
  const clear = o.clearToolUses ?? true;
  return {
    compaction: {
      triggerTokens: o.compactTriggerTokens ?? DEFAULT_COMPACT_TRIGGER_TOKENS,
      ...(o.compactInstructions ? { instructions: o.compactInstructions } : {}),
    },
    ...(clear === false ? {} : { clearToolUses: clear === true ? {} : clear }),
    ...(o.clearThinkingKeepTurns !== undefined ? { clearThinking: { keepTurns: o.clearThinkingKeepTurns } } : {}),
  };
}
