/**
 * Thinking levels, as OpenClaw names them (`thinkingLevel`). No imports: the session workflow's
 * request validator checks a turn's level with these.
 */

/** The levels; `off` asks for no thinking. */
export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/** One thinking level. */
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** True for one of `THINKING_LEVELS`. */
export function isThinkingLevel(value: unknown): value is ThinkingLevel {
  return typeof value === 'string' && (THINKING_LEVELS as readonly string[]).includes(value);
}

/** A stored level (a session toggle, possibly imported from OpenClaw) read back; anything else is no level. */
export function storedThinkingLevel(value: unknown): ThinkingLevel | undefined {
  return isThinkingLevel(value) ? value : undefined;
}
