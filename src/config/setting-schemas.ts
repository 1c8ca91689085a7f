/**
 * The value schemas settings share (durations, run limits, model windows, history limits, web
 * origins): each says what to write instead when it refuses a value.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { parseDuration } from '../context/work-style-presets';
import { THINKING_LEVELS } from '../turn/thinking-level';

/** Per-provider model windows (OpenClaw `models.providers.<provider>.models[].contextWindow`). */
export const modelWindowsSchema = z.object({
  providers: z.record(
    z.string(),
    z.object({
      models: z
        .array(z.object({ id: z.string().min(1), contextWindow: z.number().int().positive().optional() }))
        .optional(),
    }),
  ),
});

const limit = z.number().int().positive('history limits are whole numbers of user turns > 0');
/** Per-channel history limits (OpenClaw `channels.<provider>.historyLimit`, `dmHistoryLimit`, `dms.<userId>.historyLimit`). */
export const historyLimitsSchema = z.object({
  channels: z.record(
    z.string(),
    z.object({
      historyLimit: limit.optional(),
      dmHistoryLimit: limit.optional(),
      dms: z.record(z.string(), z.object({ historyLimit: limit.optional() })).optional(),
    }),
  ),
});

/**
 * A timeout: milliseconds, or a duration such as "30s" (the environment gives digits as text), at
 * most `maxMs`; refusals suggest `examples` and say the most as `most`.
 */
function timeout(examples: string, maxMs: number, most: string) {
  return z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : parseDuration(v)),
    z
      .number({ message: `use a duration such as ${examples} (or milliseconds)` })
      .int()
      .positive('use a duration > 0')
      .max(maxMs, `use at most ${most}`),
  );
}

/** A tool timeout, at most a day. */
export const toolTimeout = timeout('"30s" or "5m"', DEFAULTS.toolTimeoutMaxMs, '"24h"');

/** An approval timeout, at most a week. */
export const approvalTimeout = timeout('"30m" or "24h"', DEFAULTS.approvalTimeoutMaxMs, '"168h" (a week)');

/** A run limit: a whole number from `least` (a step limit keeps one call for the report), or `none` / null for no limit. */
export function runLimit(unit: string, least: number) {
  return z.union([
    z.null(),
    z.literal('none').transform(() => null),
    z.coerce.number().int(`a whole number of ${unit}, or "none"`).min(least, `use ${unit} ≥ ${least}, or "none"`),
  ]);
}

/** An http(s) origin as a browser sends it (a trailing slash is tolerated). */
export function isWebOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

/** A thinking level, refused with the levels to write instead. */
export const thinkingLevelSchema = z.enum(THINKING_LEVELS, { message: `use one of ${THINKING_LEVELS.join(', ')}` });
