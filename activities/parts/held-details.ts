/**
 * What an activity holds in its heartbeat details (a received model reply, a tool's output), kept
 * beside the context so that a later heartbeat of the same attempt (the wait for the database)
 * sends it again instead of clearing it: Temporal keeps only the last heartbeat's details.
 */
const held = new WeakMap<object, unknown>();

/** What a holder needs of the activity's context (a test passes its own). */
export interface HeartbeatContext {
  heartbeat(details?: unknown): void;
}

/** Heartbeats `details` and remembers them as this attempt's held details. */
export function holdInHeartbeat(ctx: HeartbeatContext, details: unknown): void {
  held.set(ctx, details);
  ctx.heartbeat(details);
}

/** The details this attempt holds, or `fallback` (those it started with) when it holds none. */
export function heldDetails(ctx: HeartbeatContext, fallback: unknown): unknown {
  return held.has(ctx) ? held.get(ctx) : fallback;
}
