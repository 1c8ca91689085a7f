import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { runWithLogAttributes } from '../activities/parts/log-attributes';

/** The session fields every Keel activity input carries, when it carries them. */
const SESSION_FIELDS = ['agentId', 'sessionKey', 'sessionId'] as const;

/**
 * Adds the session an activity works for (agent, session key, session id) and, for a turn's
 * activities, the turn's number to every line it logs through `log` / `Context.current().log`; the
 * SDK adds the workflow id, activity type and attempt. An activity that learns its session id while it
 * runs adds it with `addLogAttributes`.
 */
export const sessionLogAttributes: ActivityInterceptorsFactory = () => {
  // One record per activity (the factory runs per activity): the SDK's own lines after it returns read it too.
  const session: Record<string, unknown> = {};
  return {
    inbound: {
      execute(input, next) {
        const first = input.args[0];
        if (first && typeof first === 'object') {
          const fields = first as Record<string, unknown>;
          for (const k of SESSION_FIELDS) if (typeof fields[k] === 'string') session[k] = fields[k];
          if (Number.isInteger(fields.turn)) session.turn = fields.turn;
        }
        return runWithLogAttributes(session, () => next(input));
      },
    },
    outbound: {
      getLogAttributes(attrs, next) {
        return next({ ...attrs, ...session });
      },
    },
  };
};
