import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { subagentsKill, subagentsList, subagentsSteer } from '../../cli/subagents';
import { createSessionSignals } from '../../client/session-signals';
import type { ApiDeps } from '../api-deps';
import { allowedAgentParam } from '../allowed';
import { parseBody, parsePath, parseQuery } from '../parse-request';
import { sessionKeyParams, steerBody, subagentParams, subagentQuery } from '../request-schemas';

/**
 * `GET /v1/sessions/{sessionKey}/subagents` (the runs its agent spawned, for the tree under it) and
 * `POST /v1/subagents/{id}/kill` and `…/steer`: `keel subagents`, `kill` and `steer`, through the same functions.
 */
export function registerSubagentRoutes(app: Hono, deps: ApiDeps & { readonly logger: Logger }): void {
  const temporal = deps.client.temporal;
  const sessions = createSessionSignals(
    temporal.connection,
    temporal.options.namespace,
    deps.settings.defaults.taskQueue,
    temporal.options.dataConverter,
  );

  app.get('/v1/sessions/:sessionKey/subagents', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { agentId } = deps.client.identify(sessionKey);
    return c.json(await subagentsList({ db: deps.db, agentId, json: true }));
  });

  // The outcome goes to the server's log; the answer carries it too.
  const say = (line: string, fields: { readonly subagentId: string }) => deps.logger.info(fields, line);
  const runOf = (c: Context) => ({
    id: parsePath(c, subagentParams).id,
    agentId: allowedAgentParam(deps, parseQuery(c, subagentQuery).agent),
    say,
  });
  app.post('/v1/subagents/:id/kill', async (c) => c.json(await subagentsKill({ db: deps.db, sessions, ...runOf(c) })));
  app.post('/v1/subagents/:id/steer', async (c) => {
    const run = runOf(c);
    const { text } = await parseBody(c, steerBody);
    return c.json(await subagentsSteer({ db: deps.db, sessions, ...run, text }));
  });
}
