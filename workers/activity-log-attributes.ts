import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** The session fields every Keel activity input carries, when it carries them. */
const SESSION_FIELDS = ['agentId', 'sessionKey', 'sessionId'] as const;

/**
 * Adds the session an activity works for (agent, session key, session id) and, for a turn's
 * activities, the turn's number to every line it logs through `log` / `Context.current().log`; the
 * SDK adds the workflow id, activity type and attempt.
 */
export const sessionLogAttributes: ActivityInterceptorsFactory = () => {
  let session: Record<string, unknown> = {};
  return {
    inbound: {
      execute(input, next) {
        const first = input.args[0];
        if (first && typeof first === 'object') {
          const fields = first as Record<string, unknown>;
          session = Object.fromEntries(SESSION_FIELDS.filter((k) => typeof fields[k] === 'string').map((k) => [k, fields[k]]));
          if (Number.isInteger(fields.turn)) session.turn = fields.turn;
        }
        return next(input);
      },
    },
    outbound: {
      getLogAttributes(attrs, next) {
        return next({ ...attrs, ...session });
      },
    },
  };
};
